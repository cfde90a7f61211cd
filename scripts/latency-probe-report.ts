/**
 * Reads a file written by scripts/latency-probe.ts and prints where a submission's answer time
 * went during the last stretch of submissions (after the last pause of more than a second between
 * two arrivals: a benchmark's open loop when it runs last), per request: arrival to the append's
 * commit, the append to the documents (and search) batch holding it starting and ending, the read
 * models to the answer; and the event loop's stalls, garbage collections and projection batches in
 * that stretch. With `--client <file>` (the open loop's submissions, written by the benchmark with
 * BENCH_OPEN_LOOP_TRACE) it also splits the slowest 1% of the answers the benchmark measured, and
 * those around the median, into the load generator's late start, the way to the server, the
 * server's time and the way back, with the full and young-generation collections during them.
 *
 *   node --import tsx scripts/latency-probe-report.ts var/probe.jsonl [--from-ms N --to-ms N] [--client var/open.jsonl]
 */
import fs from 'node:fs';
import { constants } from 'node:perf_hooks';

const file = process.argv[2];
if (!file) throw new Error('usage: latency-probe-report.ts <probe.jsonl> [--from-ms N --to-ms N]');
const argText = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const arg = (name: string) => {
  const text = argText(name);
  return text === undefined ? undefined : Number(text);
};

type Line = Record<string, any>;
const lines: Line[] = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line);
const of = (kind: string) => lines.filter((l) => l.kind === kind);
const key = (p: string) => p.split(':').map(BigInt) as [bigint, bigint];
const cmp = (a: string, b: string) => {
  const [ac, ap] = key(a);
  const [bc, bp] = key(b);
  return ac !== bc ? (ac < bc ? -1 : 1) : ap !== bp ? (ap < bp ? -1 : 1) : 0;
};

const posts = of('http').filter((h) => h.method === 'POST' && String(h.url).startsWith('/api/v3/unify')).sort((a, b) => a.arrived - b.arrived);
function lastStretch(): number {
  let start: number = posts[0]?.arrived ?? 0;
  for (let i = 1; i < posts.length; i++) if (posts[i]!.arrived - posts[i - 1]!.arrived > 1000) start = posts[i]!.arrived;
  return start;
}
const from: number = arg('--from-ms') ?? lastStretch();
const to: number = arg('--to-ms') ?? Math.max(...posts.filter((h) => h.arrived >= from).map((h) => h.answered));
const inWindow = (t: number) => t >= from && t <= to;

const steps = new Map<string, Record<string, Line>>();
for (const s of of('submit')) {
  const m = steps.get(s.id) ?? {};
  m[s.step] = s;
  steps.set(s.id, m);
}
/** The read models a submission's answer waits for. */
const AWAITED = new Set(['documents', 'search']);
const batches = of('batch').sort((a, b) => a.ended - b.ended);
const batchesOf = (name: string) => batches.filter((b) => b.projection === name && b.position);
/** The first batch of `name` that ended holding `position`. */
function holder(name: string, position: string, after: number): Line | undefined {
  return batchesOf(name).find((b) => b.ended >= after && cmp(b.position, position) >= 0);
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const f = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const row = (name: string, xs: number[]) => console.log(`${name.padEnd(52)} ${String(xs.length).padStart(5)}  p50 ${f(pct(xs, 50)).padStart(7)}  p90 ${f(pct(xs, 90)).padStart(7)}  p99 ${f(pct(xs, 99)).padStart(7)}  max ${f(Math.max(...xs)).padStart(7)}`);

const window = posts.filter((h) => inWindow(h.arrived) && h.status === 200);
console.log(`window ${f(from)}–${f(to)} ms (${f((to - from) / 1000)} s): ${window.length} submissions answered 200 (${f(window.length / ((to - from) / 1000))}/s)\n`);
const cols: Record<string, number[]> = {};
const push = (k: string, v: number | undefined) => {
  if (v === undefined || !Number.isFinite(v)) return;
  (cols[k] ??= []).push(v);
};
const perRequest: { total: number; parts: Record<string, number> }[] = [];
for (const h of window) {
  const s = steps.get(h.id);
  const total = h.answered - h.arrived;
  push('arrival -> answer', total);
  if (!s?.appended) continue;
  const appended = s.appended.at;
  const parts: Record<string, number> = { 'arrival -> append committed': appended - h.arrived };
  for (const name of ['documents', 'search']) {
    const b = holder(name, s.appended.position, appended);
    if (!b) continue;
    parts[`append -> ${name} batch holding it starts`] = b.started - appended;
    parts[`${name} batch holding it (start -> end)`] = b.ended - b.started;
    parts[`append -> ${name} holds it`] = b.ended - appended;
  }
  if (s.readable) {
    parts['append -> read-your-writes done'] = s.readable.at - appended;
    // Batches of loops the answer does not wait for that started while it waited (they share the thread and the database).
    parts['other loops\' batches started meanwhile (count)'] = batches.filter((b) => b.read > 0 && !AWAITED.has(b.projection) && b.started > appended && b.started < s.readable!.at).length;
    parts['read-your-writes done -> answer sent'] = h.answered - s.readable.at;
  }
  for (const [k, v] of Object.entries(parts)) push(k, v);
  perRequest.push({ total, parts });
}
for (const [k, xs] of Object.entries(cols)) row(k, xs);

const slow = perRequest.sort((a, b) => b.total - a.total).slice(0, Math.max(1, Math.ceil(perRequest.length / 50)));
console.log(`\nthe slowest 2% (${slow.length}), mean of each part:`);
for (const k of Object.keys(slow[0]?.parts ?? {})) console.log(`  ${k.padEnd(50)} ${f(slow.reduce((s, r) => s + (r.parts[k] ?? 0), 0) / slow.length)}${k.endsWith('(count)') ? '' : ' ms'}`);
console.log(`  ${'arrival -> answer'.padEnd(50)} ${f(slow.reduce((s, r) => s + r.total, 0) / slow.length)} ms`);

const seconds = (to - from) / 1000;
const stalls = of('stall').filter((s) => inWindow(s.at));
console.log(`\nevent loop stalls > 20 ms (a 10 ms timer late): ${stalls.length} (${f(stalls.length / seconds)}/s), total ${f(stalls.reduce((s, x) => s + x.ms, 0))} ms, p50 ${f(pct(stalls.map((s) => s.ms), 50))}, max ${f(Math.max(...stalls.map((s) => s.ms)))} ms`);
const busy = stalls.filter((s) => s.cpuMs >= 0.8 * (s.ms + 10));
console.log(`  of them with the process busy on the CPU (its CPU >= 80% of the interval: long tasks, garbage collection): ${busy.length}, total ${f(busy.reduce((s, x) => s + x.ms, 0))} ms, max ${f(Math.max(...busy.map((s) => s.ms)))} ms`);
const loops = of('loop').filter((l) => inWindow(l.at));
console.log(`event loop delay per second (monitorEventLoopDelay): p99 median ${f(pct(loops.map((l) => l.p99), 50))} ms, worst second's p99 ${f(Math.max(...loops.map((l) => l.p99)))} ms, max ${f(Math.max(...loops.map((l) => l.max)))} ms`);
const gcs = of('gc').filter((g) => inWindow(g.at));
const kinds: Record<string, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};
const byKind = new Map<string, number[]>();
for (const g of gcs) byKind.set(kinds[g.gcKind] ?? String(g.gcKind), [...(byKind.get(kinds[g.gcKind] ?? String(g.gcKind)) ?? []), g.ms]);
console.log(`garbage collections: ${[...byKind].map(([k, xs]) => `${k} ${xs.length} (total ${f(xs.reduce((a, b) => a + b, 0))} ms, max ${f(Math.max(...xs))} ms)`).join('; ')}`);
console.log('the 10 longest stalls and the batches running across them:');
for (const s of [...stalls].sort((a, b) => b.ms - a.ms).slice(0, 10)) {
  const across = batches.filter((b) => b.started < s.at + s.ms && b.ended > s.at).map((b) => `${b.projection}(${b.read} ev, ${f(b.ended - b.started)} ms)`);
  const gc = gcs.filter((g) => g.at < s.at + s.ms && g.at + g.ms > s.at).map((g) => `gc ${kinds[g.gcKind] ?? g.gcKind} ${f(g.ms)} ms`);
  console.log(`  ${f(s.at - from).padStart(8)} ms: ${f(s.ms)} ms (process CPU ${f(s.cpuMs)} ms)  ${[...gc, ...across].join(', ')}`);
}

console.log('\nprojection batches in the window (duration = start to end, the log read included):');
const names = [...new Set(batches.map((b) => b.projection))];
for (const n of names) {
  const bs = batches.filter((b) => b.projection === n && inWindow(b.started) && b.read > 0);
  if (bs.length === 0) continue;
  row(`${n}: duration (${f(bs.reduce((s, b) => s + b.read, 0) / bs.length)} events/batch)`, bs.map((b) => b.ended - b.started));
}

const clientFile = argText('--client');
if (clientFile) {
  // The probe's clock line maps performance.now() to process.hrtime (one monotonic clock for both processes).
  const clock = of('clock')[0]!;
  const toHr = (ms: number) => ms + clock.hrtimeUs / 1000 - clock.now;
  const sent = fs.readFileSync(clientFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { dueUs: number; sentUs: number; answeredUs: number; ms: number });
  const arrivals = posts.map((h) => toHr(h.arrived));
  const allGcs = of('gc').map((g) => ({ at: toHr(g.at), ms: g.ms as number, kind: g.gcKind as number }));
  const allStalls = of('stall').map((x) => ({ at: toHr(x.at), ms: x.ms as number, busy: (x.cpuMs as number) >= 0.8 * ((x.ms as number) + 10) }));
  const split = sent.map((c) => {
    const due = c.dueUs / 1000;
    const out = c.sentUs / 1000;
    const back = c.answeredUs / 1000;
    // The first arrival at the server after the request left the load generator.
    let lo = 0;
    let hi = arrivals.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (arrivals[mid]! < out - 1) lo = mid + 1;
      else hi = mid;
    }
    const h = posts[lo];
    const during = allGcs.filter((g) => g.at < back && g.at + g.ms > due);
    const pause = (kind: number) => during.filter((g) => g.kind === kind).reduce((s, g) => s + g.ms, 0);
    const stalls = allStalls.filter((x) => x.at < back && x.at + x.ms > due);
    return {
      total: c.ms,
      late: out - due,
      toServer: h ? toHr(h.arrived) - out : NaN,
      server: h ? h.answered - h.arrived : NaN,
      fromServer: h ? back - toHr(h.answered) : NaN,
      full: pause(constants.NODE_PERFORMANCE_GC_MAJOR),
      young: pause(constants.NODE_PERFORMANCE_GC_MINOR),
      stalledBusy: stalls.filter((x) => x.busy).reduce((s, x) => s + x.ms, 0),
      stalledWaiting: stalls.filter((x) => !x.busy).reduce((s, x) => s + x.ms, 0),
    };
  });
  split.sort((a, b) => b.total - a.total);
  const k = Math.max(1, Math.floor(split.length / 100));
  const mid = Math.floor(split.length / 2);
  const mean = (rs: typeof split, key: keyof (typeof split)[number]) => rs.reduce((s, r) => s + r[key], 0) / rs.length;
  console.log(`\nthe benchmark's answers (${split.length}), from the scheduled start, mean of each part, ms:`);
  for (const [name, rs] of [['the slowest 1%', split.slice(0, k)], ['around the median', split.slice(Math.max(0, mid - (k >> 1)), mid - (k >> 1) + k)]] as const) {
    console.log(
      `  ${name} (${rs.length}): ${f(mean(rs, 'total'))} = load generator late ${f(mean(rs, 'late'))} + to the server ${f(mean(rs, 'toServer'))} + server ${f(mean(rs, 'server'))} + back ${f(mean(rs, 'fromServer'))}; ` +
        `full-collection pauses meanwhile ${f(mean(rs, 'full'))} (in ${rs.filter((r) => r.full > 0).length} of them), young ${f(mean(rs, 'young'))}; ` +
        `the server's loop stalled over 20 ms meanwhile ${f(mean(rs, 'stalledBusy'))} busy on the CPU, ${f(mean(rs, 'stalledWaiting'))} waiting for a core`,
    );
  }
}
