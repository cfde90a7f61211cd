/**
 * A latency probe for benchmarks, loaded into the server process with `--import` (bench:* passes
 * BENCH_SERVER_NODE_ARGS to the server):
 *
 *   BENCH_SERVER_NODE_ARGS="--import ./dist/scripts/latency-probe.js" LATENCY_PROBE_OUT=var/probe.jsonl npm run bench:submit ...
 *
 * (the benchmarks' server runs the tree compiled to dist/, where this file is compiled too; with
 * BENCH_SERVER_TSX=1 it runs through tsx: "--import tsx --import ./scripts/latency-probe.ts")
 *
 * It records, as JSON lines in LATENCY_PROBE_OUT (default var/latency-probe-<pid>.jsonl): every
 * HTTP request's arrival and answer (node's own http.server channels), a submission's append and
 * read-your-writes steps and every projection batch (the service's channels,
 * platform/trace-channels.ts), garbage collections, the event loop's delay each second
 * (monitorEventLoopDelay) and every stall of the loop over 20 ms (a 10 ms timer that fired late).
 * Times are performance.now() in ms; the first line maps them to process.hrtime (the clock of a
 * --cpu-prof profile). scripts/latency-probe-report.ts reads the file. The service loads nothing
 * of this unless the flag is given.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { projectionBatches, submitSteps, type ProjectionBatchTrace, type SubmitStep } from '../platform/trace-channels.js';
import type { Position } from '../platform/eventstore/port.js';

const out = process.env.LATENCY_PROBE_OUT || `var/latency-probe-${process.pid}.jsonl`;
let lines: string[] = [JSON.stringify({ kind: 'clock', now: performance.now(), hrtimeUs: Number(process.hrtime.bigint() / 1000n) })];
fs.writeFileSync(out, '');
function flush(): void {
  if (lines.length === 0) return;
  fs.appendFileSync(out, lines.join('\n') + '\n');
  lines = [];
}
const record = (line: Record<string, unknown>) => lines.push(JSON.stringify(line));
const pos = (p: Position | null) => (p ? `${p.commit}:${p.prepare}` : null);

const arrived = new WeakMap<IncomingMessage, number>();
diagnosticsChannel.subscribe('http.server.request.start', (message) => {
  arrived.set((message as { request: IncomingMessage }).request, performance.now());
});
diagnosticsChannel.subscribe('http.server.response.finish', (message) => {
  const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
  const at = arrived.get(request);
  if (at === undefined) return;
  record({ kind: 'http', id: response.getHeader('x-request-id') ?? null, method: request.method, url: request.url, status: response.statusCode, arrived: at, answered: performance.now() });
});
submitSteps.subscribe((message) => {
  const m = message as SubmitStep;
  record({ kind: 'submit', id: m.requestId, step: m.step, position: pos(m.position), at: performance.now() });
});
projectionBatches.subscribe((message) => {
  const m = message as ProjectionBatchTrace;
  record({ kind: 'batch', projection: m.projection, started: m.startedAt, ended: m.endedAt, read: m.read, position: pos(m.position) });
});

new PerformanceObserver((list) => {
  for (const e of list.getEntries()) record({ kind: 'gc', at: e.startTime, ms: e.duration, gcKind: ((e as { detail?: { kind?: number } }).detail)?.kind ?? null });
}).observe({ entryTypes: ['gc'] });

const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
const TICK_MS = 10;
let expected = performance.now() + TICK_MS;
let cpuAt = process.cpuUsage();
let secondStarted = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  const late = now - expected;
  const cpu = process.cpuUsage(cpuAt);
  cpuAt = process.cpuUsage();
  // cpuMs: the process's CPU (all its threads) since the previous tick; far below the stall, the
  // process was waiting for a core (another process ran), not running a long task.
  if (late > 20) record({ kind: 'stall', at: expected, ms: late, cpuMs: (cpu.user + cpu.system) / 1000 });
  expected = now + TICK_MS;
  if (now - secondStarted >= 1000) {
    record({ kind: 'loop', at: now, p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 });
    delay.reset();
    secondStarted = now;
    flush();
  }
}, TICK_MS);
timer.unref();
process.on('exit', flush);
