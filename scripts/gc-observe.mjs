/**
 * The server's garbage collections, second by second (a diagnostic preload, plain JavaScript since
 * it loads before tsx): `BENCH_SERVER_NODE_ARGS="--import ./scripts/gc-observe.mjs"` on a benchmark
 * that starts the server. Each second it records the collections V8's GCProfiler saw (count, time
 * on the main thread, bytes a scavenge moved to the old generation, bytes a full collection freed),
 * the main thread's and the other threads' CPU (V8's helper threads mark and sweep concurrently),
 * the heap's spaces and RSS, and how many POST requests had arrived; it writes them as JSON at exit
 * to GC_OBSERVE_OUT (default var/gc-observe-<pid>.json). `node scripts/gc-report.mjs <file> <documents>`
 * sums the seconds from the first request on. GC_SNAPSHOT_BUSY_S=11,14 also writes a heap snapshot
 * (var/heap-<pid>-<n>.heapsnapshot) at the 11th and 14th second in which the server used >= 0.15 cores.
 */
import v8 from 'node:v8';
import fs from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import http from 'node:http';

// POST requests seen (the submissions), to find the loaded windows.
let posts = 0;
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, ...rest) {
  if (event === 'request' && req.method === 'POST') posts++;
  return emit.call(this, event, req, ...rest);
};

const out = process.env.GC_OBSERVE_OUT ?? `var/gc-observe-${process.pid}.json`;
const kinds = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' };
let pauses = {};
const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const k = kinds[e.detail?.kind ?? e.kind] ?? String(e.detail?.kind);
    const p = (pauses[k] ??= { n: 0, ms: 0, max: 0 });
    p.n++; p.ms += e.duration; if (e.duration > p.max) p.max = e.duration;
  }
});
obs.observe({ entryTypes: ['gc'] });
let prof = new v8.GCProfiler();
prof.start();
const samples = [];
const t0 = Date.now();

function threadCpu() {
  let main = 0, other = 0;
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const st = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      const cpu = (Number(f[11]) + Number(f[12])) / 100;
      if (Number(tid) === process.pid) main += cpu; else other += cpu;
    } catch {}
  }
  return { main, other };
}
function summarise(data) {
  const byType = {};
  const sp = (x) => Object.fromEntries(x.heapSpaceStatistics.map((s) => [s.spaceName, s.spaceUsedSize]));
  for (const g of data?.statistics ?? []) {
    const t = (byType[g.gcType] ??= { n: 0, costMs: 0, promotedKB: 0, freedKB: 0 });
    t.n++; t.costMs += g.cost / 1000;
    const b = sp(g.beforeGC), a = sp(g.afterGC);
    if (g.gcType === 'Scavenge' || g.gcType === 'MinorMarkCompact') t.promotedKB += ((a.old_space ?? 0) - (b.old_space ?? 0) + (a.large_object_space ?? 0) - (b.large_object_space ?? 0)) / 1024;
    t.freedKB += (g.beforeGC.heapStatistics.usedHeapSize - g.afterGC.heapStatistics.usedHeapSize) / 1024;
    if (g.gcType === 'MarkSweepCompact') { t.freedOldKB = (t.freedOldKB ?? 0) + ((b.old_space ?? 0) - (a.old_space ?? 0)) / 1024; t.freedLoKB = (t.freedLoKB ?? 0) + ((b.large_object_space ?? 0) - (a.large_object_space ?? 0)) / 1024; }
  }
  return byType;
}
function sample() {
  const gc = summarise(prof.stop());
  prof = new v8.GCProfiler();
  prof.start();
  const h = v8.getHeapStatistics();
  const spc = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_used_size / 1024)]));
  const c = process.cpuUsage();
  const prev = samples[samples.length - 1];
  if (snapBusy.length && prev && ((c.user + c.system) / 1e6 - prev.cpu) / ((Date.now() - t0) / 1000 - prev.s) >= 0.15 && snapBusy.includes(++busy)) {
    const f = v8.writeHeapSnapshot(`var/heap-${process.pid}-${busy}.heapsnapshot`); console.error(`heap snapshot ${f} at ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  samples.push({ posts, s: (Date.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6, threads: threadCpu(), pauses: structuredClone(pauses), gc, usedKB: Math.round(h.used_heap_size / 1024), totalKB: Math.round(h.total_heap_size / 1024), extKB: Math.round(h.external_memory / 1024), rssKB: Math.round(process.memoryUsage.rss() / 1024), sp: spc });
}
setInterval(sample, 1000).unref();
// GC_SNAPSHOT_BUSY_S=k: a heap snapshot (var/heap-<pid>.heapsnapshot) at the k-th second the server used >= 0.15 cores.
const snapBusy = (process.env.GC_SNAPSHOT_BUSY_S ?? '').split(',').filter(Boolean).map(Number);
let busy = 0;

process.on('exit', () => {
  sample();
  prof.stop();
  fs.writeFileSync(out, JSON.stringify({ pid: process.pid, peakRssKB: process.resourceUsage().maxRSS, samples }));
});
