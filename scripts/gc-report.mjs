/**
 * `node scripts/gc-report.mjs <file from gc-observe.mjs> <documents>`: the server's collections from
 * its first POST request to its exit, per document (documents: those the run stored, e.g. the
 * benchmark's "in the read model" count, warm-up included).
 */
import fs from 'node:fs';
const [file, docsArg] = process.argv.slice(2);
const d = JSON.parse(fs.readFileSync(file, 'utf8'));
const S = d.samples;
let first = Math.max(1, S.findIndex((s) => s.posts > 0));
const base = S[first - 1], end = S[S.length - 1];
const tot = {};
for (const s of S.slice(first)) for (const [k, v] of Object.entries(s.gc ?? {})) { const t = (tot[k] ??= { n: 0, costMs: 0, promotedKB: 0, freedOldKB: 0, freedLoKB: 0 }); t.n += v.n; t.costMs += v.costMs; t.promotedKB += v.promotedKB; t.freedOldKB += v.freedOldKB ?? 0; t.freedLoKB += v.freedLoKB ?? 0; }
const docs = Number(docsArg);
const cpu = end.cpu - base.cpu, main = end.threads.main - base.threads.main, other = end.threads.other - base.threads.other;
const gcMs = Object.values(tot).reduce((a, t) => a + t.costMs, 0);
const r = (x, n = 2) => Number(x.toFixed(n));
console.log(JSON.stringify({ from_s: base.s, to_s: end.s, docs, serverCpuS: r(cpu), mainThreadS: r(main), otherThreadsS: r(other), cpuMsPerDoc: r((cpu * 1000) / docs), gcPauseMsPerDoc: r(gcMs / docs), gcPauseShareOfServerCpu: r(gcMs / 1000 / cpu, 3),
  scavenges: tot.Scavenge?.n, scavengeMsPerDoc: r((tot.Scavenge?.costMs ?? 0) / docs), promotedKBPerDoc: r((tot.Scavenge?.promotedKB ?? 0) / docs, 1),
  majorFreedOldKBPerDoc: r((tot.MarkSweepCompact?.freedOldKB ?? 0) / docs, 1), majorFreedLoKBPerDoc: r((tot.MarkSweepCompact?.freedLoKB ?? 0) / docs, 1), majorGCs: tot.MarkSweepCompact?.n ?? 0, majorMsPerDoc: r(((tot.MarkSweepCompact?.costMs ?? 0) + (tot.IncrementalMarking?.costMs ?? 0)) / docs), majorPer1000Docs: r(((tot.MarkSweepCompact?.n ?? 0) * 1000) / docs, 1),
  oldSpaceMaxMB: r(Math.max(...S.slice(first).map((s) => s.sp.old_space)) / 1024, 1), usedMaxMB: r(Math.max(...S.slice(first).map((s) => s.usedKB)) / 1024, 1), peakRssMB: r(d.peakRssKB / 1024, 0) }, null, 1));
