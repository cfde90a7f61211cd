/**
 * Rebuild CLI: replays the whole event log into fresh tables for one projection (or all of
 * them) and swaps them in (projections/rebuild.ts). The live tables keep answering meanwhile,
 * so it is safe to run while the server runs.
 *
 *   npm run rebuild -- <projection|all> [--batch-size <n>]
 *
 * Progress goes to stderr: a progress bar on a terminal, plain lines otherwise. Each finished
 * projection prints one JSON line {"projection", "events", "seconds"} on stdout.
 *
 * Exit codes: 0 ok (also when there is nothing to rebuild); 1 the rebuild failed or the database
 * is unreachable; 2 bad arguments or unknown projection.
 */
import cliProgress from 'cli-progress';
import { Command, InvalidArgumentError } from 'commander';
import type { EventStore } from '../platform/eventstore/port.js';
import type { Database } from '../platform/database.js';
import { allProjections } from '../projections/index.js';
import type { Projection } from '../projections/projection.js';
import { rebuildProjection, type RebuildProgress } from '../projections/rebuild.js';
import { SEARCH_PROJECTION } from '../projections/search.js';
import { createSearchIndex } from '../readmodels/search/index.js';
import { isMainModule, onInterrupt, runCli, toJson, UsageError, withRuntime } from './cli-support.js';

export interface RebuildSummary {
  projection: string;
  /** Events read from the log (the whole log, up to the swap). */
  events: number;
  seconds: number;
}

export class UnknownProjectionError extends UsageError {
  override readonly name: string = 'UnknownProjectionError';
  constructor(readonly projection: string, readonly known: readonly string[]) {
    super(
      `unknown projection "${projection}"; known projections: ${known.length > 0 ? known.join(', ') : '(none registered)'} (or "all")`,
    );
  }
}

export const NOTHING_TO_REBUILD = 'nothing to rebuild: no projections are registered';

/** How progress is shown: 'auto' is a bar when stderr is a terminal, else plain lines. */
export type ProgressMode = 'auto' | 'bar' | 'lines' | 'none';

export interface RebuildOptions {
  /** A projection name, or "all". */
  target: string;
  /** Events per batch (rebuildProjection's default when unset). */
  batchSize?: number;
  progress?: ProgressMode;
  /** Minimum time between two plain progress lines (default 2000 ms). */
  progressIntervalMs?: number;
  /** Where the JSON summary lines go (default process.stdout). */
  stdout?: NodeJS.WritableStream;
  /** Where progress and messages go (default process.stderr). */
  stderr?: NodeJS.WritableStream & { isTTY?: boolean };
}

/** The projections `target` names: all of them for "all"; throws UnknownProjectionError. */
export function selectProjections(projections: readonly Projection[], target: string): Projection[] {
  if (target === 'all') return [...projections];
  const found = projections.find((p) => p.name === target);
  if (!found) throw new UnknownProjectionError(target, projections.map((p) => p.name));
  return [found];
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export interface ProgressState {
  projection: string;
  done: number;
  /** Events in the log when the rebuild started (raised if more are read), or null when unknown. */
  total: number | null;
  phase: RebuildProgress['phase'];
  startedAt: number;
}

function rateOf(state: ProgressState, now: number): number {
  const elapsed = (now - state.startedAt) / 1000;
  return elapsed > 0 ? state.done / elapsed : 0;
}

function etaOf(state: ProgressState, now: number): string {
  if (state.total === null) return '?';
  if (state.phase !== 'copying') return '0s';
  const rate = rateOf(state, now);
  return rate > 0 ? formatDuration((state.total - state.done) / rate) : '?';
}

/** One plain progress line, e.g. "rebuild invoices: 1200/5000 events (24%), 600 events/s, ETA 6s". */
export function describeProgress(state: ProgressState, now = Date.now()): string {
  const rate = Math.round(rateOf(state, now));
  const phase = state.phase === 'copying' ? '' : `, ${state.phase}`;
  if (state.total === null) return `rebuild ${state.projection}: ${state.done} events, ${rate} events/s${phase}`;
  const pct = state.total > 0 ? Math.floor((state.done / state.total) * 100) : 100;
  return `rebuild ${state.projection}: ${state.done}/${state.total} events (${pct}%), ${rate} events/s, ETA ${etaOf(state, now)}${phase}`;
}

interface ProgressReporter {
  start(projection: string, total: number | null): void;
  update(progress: RebuildProgress): void;
  stop(): void;
}

class LinesReporter implements ProgressReporter {
  private state: ProgressState | null = null;
  private lastPrinted = 0;
  constructor(private readonly out: NodeJS.WritableStream, private readonly intervalMs: number) {}

  start(projection: string, total: number | null): void {
    this.state = { projection, done: 0, total, phase: 'copying', startedAt: Date.now() };
    this.lastPrinted = Date.now();
    this.out.write(`rebuild ${projection}: started, ${total === null ? 'unknown number of' : total} events in the log\n`);
  }

  update(p: RebuildProgress): void {
    const state = this.state;
    if (!state) return;
    const phaseChanged = p.phase !== state.phase;
    state.done = p.eventsRead;
    state.phase = p.phase;
    if (state.total !== null && state.done > state.total) state.total = state.done;
    const now = Date.now();
    if (p.phase === 'done') {
      this.out.write(`rebuild ${state.projection}: done, ${state.done} events in ${((now - state.startedAt) / 1000).toFixed(1)}s\n`);
    } else if (phaseChanged || now - this.lastPrinted >= this.intervalMs) {
      this.out.write(`${describeProgress(state, now)}\n`);
      this.lastPrinted = now;
    }
  }

  stop(): void {
    this.state = null;
  }
}

class BarReporter implements ProgressReporter {
  private bar: cliProgress.SingleBar | null = null;
  private state: ProgressState | null = null;
  constructor(private readonly out: NodeJS.WritableStream) {}

  private payload() {
    const s = this.state!;
    const now = Date.now();
    return { projection: s.projection, rate: Math.round(rateOf(s, now)), etaText: etaOf(s, now), phase: s.phase };
  }

  start(projection: string, total: number | null): void {
    this.state = { projection, done: 0, total, phase: 'copying', startedAt: Date.now() };
    const format =
      total === null
        ? '{projection} {value} events | {rate} events/s | {duration_formatted} | {phase}'
        : '{projection} [{bar}] {percentage}% | {value}/{total} events | {rate} events/s | ETA {etaText} | {phase}';
    this.bar = new cliProgress.SingleBar(
      { stream: this.out, format, hideCursor: true, clearOnComplete: false, fps: 5, emptyOnZero: false },
      cliProgress.Presets.shades_classic,
    );
    this.bar.start(total ?? 0, 0, this.payload());
  }

  update(p: RebuildProgress): void {
    const state = this.state;
    const bar = this.bar;
    if (!state || !bar) return;
    state.done = p.eventsRead;
    state.phase = p.phase;
    if (state.total !== null && state.done > state.total) {
      state.total = state.done;
      bar.setTotal(state.total);
    }
    bar.update(state.done, this.payload());
  }

  stop(): void {
    this.bar?.stop();
    this.bar = null;
    this.state = null;
  }
}

const noProgress: ProgressReporter = { start() {}, update() {}, stop() {} };

function reporterFor(options: RebuildOptions, stderr: NonNullable<RebuildOptions['stderr']>): ProgressReporter {
  const mode = options.progress ?? 'auto';
  if (mode === 'none') return noProgress;
  if (mode === 'bar' || (mode === 'auto' && stderr.isTTY)) return new BarReporter(stderr);
  return new LinesReporter(stderr, options.progressIntervalMs ?? 2000);
}

/**
 * Rebuilds the projection named by `options.target` (or every one of `projections` for "all"),
 * one after the other, showing progress, and writes one JSON summary line per projection.
 * Throws UnknownProjectionError (before touching anything) for a name not in `projections`.
 */
export async function runRebuild(
  runtime: { db: Pick<Database, 'knex'>; store: EventStore },
  projections: readonly Projection[],
  options: RebuildOptions,
): Promise<RebuildSummary[]> {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const selected = selectProjections(projections, options.target);
  if (selected.length === 0) {
    stderr.write(`${NOTHING_TO_REBUILD}\n`);
    return [];
  }
  const reporter = reporterFor(options, stderr);
  const forget = onInterrupt(async () => reporter.stop());
  const summaries: RebuildSummary[] = [];
  try {
    for (const projection of selected) {
      const total = await runtime.store.countEvents();
      const started = performance.now();
      reporter.start(projection.name, total);
      let result: { eventsRead: number };
      try {
        result = await rebuildProjection(runtime.db.knex, runtime.store, projection, {
          ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
          onProgress: (p) => reporter.update(p),
        });
      } finally {
        reporter.stop();
      }
      const summary: RebuildSummary = {
        projection: projection.name,
        events: result.eventsRead,
        seconds: Math.round(performance.now() - started) / 1000,
      };
      summaries.push(summary);
      stdout.write(`${toJson(summary)}\n`);
    }
  } finally {
    forget();
  }
  return summaries;
}

function positiveInteger(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

export function rebuildProgram(run: (target: string, options: { batchSize?: number }) => Promise<void>): Command {
  return new Command('rebuild')
    .description('Rebuild projections from the event log into fresh tables, then swap them in.')
    .argument('<projection>', 'a projection name, or "all" for every projection')
    .option('--batch-size <n>', 'events per batch (default 1000)', positiveInteger)
    .exitOverride()
    .showSuggestionAfterError()
    .action(async (target: string, opts: { batchSize?: number }) => run(target, opts));
}

if (isMainModule(import.meta.url)) {
  void runCli(async () => {
    await rebuildProgram(async (target, opts) => {
      // Check the name before opening the database: a typo answers at once. The search
      // projection needs its index, which needs the runtime.
      const names = [...allProjections().map((p) => p.name), SEARCH_PROJECTION];
      if (target !== 'all' && !names.includes(target)) throw new UnknownProjectionError(target, names);
      await withRuntime(async (runtime) => {
        const search = createSearchIndex(runtime.config, runtime.db.knex);
        try {
          await runRebuild(runtime, allProjections(search), { target, ...(opts.batchSize !== undefined ? { batchSize: opts.batchSize } : {}) });
        } finally {
          await search.close();
        }
      });
    }).parseAsync(process.argv);
    return 0;
  });
}
