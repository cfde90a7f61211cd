/**
 * Audit CLI: the history of one stream, event by event, and the state its aggregate folds
 * them into, optionally as of a point in (domain) time.
 *
 *   npm run audit -- stream <streamId> [--as-of <ISO time>] [--format json|table]
 *
 * json (default): one JSON line per event, then one summary line
 *   {"streamId", "asOf", "events", "revision", "state"} (plus "note" when no aggregate is
 *   registered for the stream's category). Bigints are printed as strings.
 * table: a table of the events and the folded state, for people.
 *
 *   npm run audit -- credits --workspace <id> --company <id> [--as-of <ISO time>]
 *
 * reconstructs a company's credit balance (and the pool's) as of an instant from the workspace's
 * credit events alone, and checks every recorded balance against the fold: one JSON document;
 * exit 1 when a recorded balance disagrees (listed under "inconsistencies").
 *
 *   npm run audit -- artifacts
 *
 * verifies the artifact store against the log: recomputes the SHA-256 of every stored artifact
 * and compares it with its key, and checks that every artifact an event names (the XML of a
 * submitted document, the XML and Tax Data Document of a delivery, a received purchase's XML and
 * a buyer's answer) is stored, or, for an event
 * written before artifacts were stored by hash, that its inline bytes hash as named. One JSON
 * document; exit 1 when an artifact does not match its key or an event names one not stored
 * (listed under "problems").
 *
 * Exit codes: 0 ok; 1 unknown stream, database unreachable, the fold failed, or an artifact
 * problem; 2 bad arguments.
 */
import Table from 'cli-table3';
import { Command, InvalidArgumentError, Option } from 'commander';
import { createHash } from 'node:crypto';
import { positionToString, START, type EventStore, type Position, type RecordedEvent } from '../platform/eventstore/port.js';
import { artifactRefsOf, type ArtifactRef } from '../domain/document/document.js';
import { purchaseArtifactRefsOf } from '../domain/purchases/purchase.js';
import type { AggregateFold } from '../domain/aggregates.js';
import { aggregateFor, streamCategory } from '../domain/index.js';
import { auditCompanyCredits } from '../domain/credits/audit.js';
import { creditsStream } from '../domain/credits/values.js';
import { CliError, isMainModule, runCli, toJson, withRuntime } from './cli-support.js';

/** One event as the audit prints it (JSON-ready: bigints and dates as strings). */
export interface AuditedEvent {
  streamId: string;
  revision: string;
  /** Global position "commit/prepare". */
  position: string;
  type: string;
  schemaVersion: number;
  /** Domain time (metadata.occurredAt). */
  occurredAt: string;
  /** Store time. */
  recordedAt: string;
  metadata: RecordedEvent['metadata'];
  data: unknown;
}

export interface AuditSummary {
  streamId: string;
  /** The as-of time (ISO, UTC) or null for "now". */
  asOf: string | null;
  /** Events up to as-of. */
  events: number;
  /** Revision of the last event up to as-of; null when there is none. */
  revision: string | null;
  /** The fold of those events; null when no aggregate is registered or the fold failed. */
  state: unknown;
  note?: string;
  /** Set when the fold threw: which revision and why. */
  error?: string;
}

export interface AuditResult {
  events: AuditedEvent[];
  summary: AuditSummary;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)$/i;

/**
 * Parses an as-of time: an ISO 8601 date-time with a time zone (Z or an offset), so that the
 * cut-off never depends on the machine's zone. Throws with a clear message otherwise.
 */
export function parseAsOf(raw: string): Date {
  const trimmed = raw.trim();
  const date = new Date(trimmed);
  if (!ISO_TIME.test(trimmed) || Number.isNaN(date.getTime())) {
    throw new Error(`expected an ISO 8601 time with a time zone, e.g. 2025-01-31T23:59:59Z or 2025-01-31T23:59:59+01:00`);
  }
  return date;
}

function occurredAtMs(event: RecordedEvent): number {
  return Date.parse(event.metadata.occurredAt);
}

export function toAuditedEvent(event: RecordedEvent): AuditedEvent {
  return {
    streamId: event.streamId,
    revision: event.revision.toString(),
    position: positionToString(event.position),
    type: event.type,
    schemaVersion: event.schemaVersion,
    occurredAt: event.metadata.occurredAt,
    recordedAt: event.recordedAt.toISOString(),
    metadata: event.metadata,
    data: event.data,
  };
}

/**
 * The audit of a stream, pure: keeps the events whose metadata.occurredAt is at or before
 * `asOf` (all of them when null; an event whose occurredAt cannot be parsed is kept only
 * without as-of), and folds them with `fold` from its initial state. A fold that throws does
 * not hide the history: the summary then carries `error` and a null state.
 */
export function auditStream(
  events: readonly RecordedEvent[],
  asOf: Date | null,
  fold: AggregateFold<unknown> | null,
  streamId: string = events[0]?.streamId ?? '',
): AuditResult {
  const cutOff = asOf?.getTime() ?? null;
  const kept = cutOff === null ? [...events] : events.filter((e) => occurredAtMs(e) <= cutOff);
  const last = kept[kept.length - 1];
  const summary: AuditSummary = {
    streamId,
    asOf: asOf ? asOf.toISOString() : null,
    events: kept.length,
    revision: last ? last.revision.toString() : null,
    state: null,
  };
  if (!fold) {
    summary.note = `no aggregate registered for category ${streamCategory(streamId)}`;
  } else {
    let state = fold.initialState;
    let failed = false;
    for (const e of kept) {
      try {
        state = fold.evolve(state, { type: e.type, schemaVersion: e.schemaVersion, data: e.data, occurredAt: e.metadata.occurredAt });
      } catch (err) {
        summary.error = `fold failed at revision ${e.revision} (${e.type} v${e.schemaVersion}): ${err instanceof Error ? err.message : String(err)}`;
        failed = true;
        break;
      }
    }
    if (!failed) summary.state = state;
  }
  return { events: kept.map(toAuditedEvent), summary };
}

/** The JSON lines of an audit: one per event, then the summary. */
export function renderJsonLines(result: AuditResult): string {
  return [...result.events, result.summary].map((v) => `${toJson(v)}\n`).join('');
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

function compactValue(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (Array.isArray(v)) return `[${v.length}]`;
  if (typeof v === 'object') return `{${Object.keys(v).length}}`;
  if (typeof v === 'string') return v;
  return String(v);
}

/** A one-glance summary of event data: top-level fields as key=value; nested values as {n}/[n]. */
export function summarizeData(data: unknown, max = 60): string {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return truncate(compactValue(data), max);
  const parts = Object.entries(data).map(([k, v]) => `${k}=${compactValue(v)}`);
  return parts.length === 0 ? '{}' : truncate(parts.join(', '), max);
}

const KEY_METADATA = ['requestId', 'correlationId', 'keyId', 'idempotencyKey', 'actor'] as const;

function metadataCell(metadata: RecordedEvent['metadata']): string {
  const lines = KEY_METADATA.flatMap((k) => {
    const v = metadata[k];
    return v === null || v === undefined || v === '' ? [] : [`${k}: ${v}`];
  });
  return lines.length === 0 ? '-' : lines.join('\n');
}

/** The table format: the events, then the folded state pretty-printed. */
export function renderTable(result: AuditResult, options: { color?: boolean } = {}): string {
  const table = new Table({
    head: ['rev', 'occurredAt', 'type', 'metadata', 'data'],
    style: options.color ? {} : { head: [], border: [] },
  });
  for (const e of result.events) {
    table.push([e.revision, e.occurredAt, `${e.type} v${e.schemaVersion}`, metadataCell(e.metadata), summarizeData(e.data)]);
  }
  const s = result.summary;
  const out: string[] = [];
  out.push(`stream ${s.streamId}${s.asOf ? ` as of ${s.asOf}` : ''}: ${s.events} event${s.events === 1 ? '' : 's'}, revision ${s.revision ?? '-'}`);
  out.push(result.events.length > 0 ? table.toString() : '(no events up to this time)');
  if (s.error) out.push(`state: unavailable, ${s.error}`);
  else if (s.note) out.push(`state: none (${s.note})`);
  else out.push(`state:\n${toJson(s.state, 2)}`);
  return `${out.join('\n')}\n`;
}

export interface StreamCommandOptions {
  asOf?: Date;
  format: 'json' | 'table';
}

async function streamCommand(streamId: string, options: StreamCommandOptions): Promise<number> {
  const events = await withRuntime((runtime) => runtime.store.readStream(streamId));
  if (events.length === 0) throw new CliError(`stream not found: ${streamId} (it has no events)`);
  const result = auditStream(events, options.asOf ?? null, aggregateFor(streamId), streamId);
  process.stdout.write(options.format === 'table' ? renderTable(result, { color: Boolean(process.stdout.isTTY) }) : renderJsonLines(result));
  if (result.summary.error) {
    process.stderr.write(`error: ${result.summary.error}\n`);
    return 1;
  }
  return 0;
}

async function creditsCommand(options: { workspace: string; company: string; asOf?: Date }): Promise<number> {
  const streamId = creditsStream(options.workspace);
  const events = await withRuntime((runtime) => runtime.store.readStream(streamId));
  if (events.length === 0) throw new CliError(`no credit events for workspace ${options.workspace} (stream ${streamId} is empty)`);
  const audit = auditCompanyCredits(
    events.map((e) => ({ id: e.id, type: e.type, schemaVersion: e.schemaVersion, data: e.data, occurredAt: e.metadata.occurredAt, revision: e.revision })),
    options.company,
    options.asOf ?? null,
    new Date(),
  );
  const { total: _total, ...pool } = audit.pool;
  process.stdout.write(`${toJson({ workspaceId: options.workspace, companyId: options.company, ...audit, pool })}\n`);
  if (audit.inconsistencies.length > 0) {
    process.stderr.write(`error: ${audit.inconsistencies.length} recorded balance(s) disagree with the events\n`);
    return 1;
  }
  return 0;
}

export interface ArtifactProblem {
  kind: 'hash_mismatch' | 'missing' | 'inline_mismatch' | 'undecodable';
  sha256: string | null;
  /** The event naming it (missing, inline_mismatch, undecodable). */
  streamId?: string;
  eventId?: string;
  position?: string;
  role?: string;
  message: string;
}

export interface ArtifactAudit {
  /** Artifacts stored, and how many of them hash to their key. */
  stored: number;
  verified: number;
  /** Events read, and the artifact references they hold: resolved in the store, or inline (events before artifacts were stored by hash). */
  events: number;
  references: number;
  resolved: number;
  inline: number;
  /** Stored artifacts no event names (an append that failed after its artifacts were written, where the engine writes them first). */
  unreferenced: number;
  problems: ArtifactProblem[];
}

const sha256Hex = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Verifies every stored artifact against its key and every reference of the log against the store (see the header). */
export async function auditArtifacts(store: EventStore, options: { pageSize?: number } = {}): Promise<ArtifactAudit> {
  const pageSize = options.pageSize ?? 500;
  const result: ArtifactAudit = { stored: 0, verified: 0, events: 0, references: 0, resolved: 0, inline: 0, unreferenced: 0, problems: [] };
  const stored = new Set<string>();
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<EventStore['scanArtifacts']>> = await store.scanArtifacts(cursor, pageSize);
    for (const a of page.artifacts) {
      result.stored++;
      stored.add(a.sha256);
      const actual = sha256Hex(a.content);
      if (actual === a.sha256) result.verified++;
      else result.problems.push({ kind: 'hash_mismatch', sha256: a.sha256, message: `stored bytes hash to ${actual}` });
    }
    cursor = page.cursor;
  } while (cursor !== null);

  const named = new Set<string>();
  let after: Position = START;
  for (;;) {
    const events = await store.readAll(after, pageSize);
    if (events.length === 0) break;
    for (const e of events) {
      result.events++;
      const where = { streamId: e.streamId, eventId: e.id, position: positionToString(e.position) };
      let refs: { role: string; ref: ArtifactRef }[];
      try {
        refs = [...artifactRefsOf(e), ...purchaseArtifactRefsOf(e)];
      } catch (err) {
        result.problems.push({ kind: 'undecodable', sha256: null, ...where, message: (err as Error).message });
        continue;
      }
      for (const { role, ref } of refs) {
        result.references++;
        named.add(ref.sha256);
        if (ref.inlineBase64 !== undefined) {
          result.inline++;
          const actual = sha256Hex(Buffer.from(ref.inlineBase64, 'base64'));
          if (actual !== ref.sha256) result.problems.push({ kind: 'inline_mismatch', sha256: ref.sha256, ...where, role, message: `inline bytes hash to ${actual}` });
        } else if (stored.has(ref.sha256)) {
          result.resolved++;
        } else {
          result.problems.push({ kind: 'missing', sha256: ref.sha256, ...where, role, message: 'the event names an artifact that is not stored' });
        }
      }
    }
    after = events[events.length - 1]!.position;
  }
  for (const hash of stored) if (!named.has(hash)) result.unreferenced++;
  return result;
}

async function artifactsCommand(): Promise<number> {
  const audit = await withRuntime((runtime) => auditArtifacts(runtime.store));
  process.stdout.write(`${toJson(audit)}\n`);
  if (audit.problems.length > 0) {
    process.stderr.write(`error: ${audit.problems.length} artifact problem(s)\n`);
    return 1;
  }
  return 0;
}

export function auditProgram(setExitCode: (code: number) => void): Command {
  const program = new Command('audit')
    .description('Reconstruct the history and the state of event streams.')
    .exitOverride()
    .showSuggestionAfterError();
  program
    .command('stream')
    .description("Print a stream's events and the state its aggregate folds them into.")
    .argument('<streamId>', 'the stream id, e.g. invoice-<uuid>')
    .addOption(
      new Option('--as-of <time>', 'only events that occurred at or before this ISO 8601 time (metadata.occurredAt)').argParser((raw) => {
        try {
          return parseAsOf(raw);
        } catch (err) {
          throw new InvalidArgumentError((err as Error).message);
        }
      }),
    )
    .addOption(new Option('--format <format>', 'output format').choices(['json', 'table']).default('json'))
    .action(async (streamId: string, opts: StreamCommandOptions) => {
      setExitCode(await streamCommand(streamId, opts));
    });
  program
    .command('credits')
    .description("Reconstruct a company's credit balance and the pool as of an instant from the workspace's credit events.")
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--company <id>', 'company id')
    .addOption(
      new Option('--as-of <time>', 'only events that occurred at or before this ISO 8601 time').argParser((raw) => {
        try {
          return parseAsOf(raw);
        } catch (err) {
          throw new InvalidArgumentError((err as Error).message);
        }
      }),
    )
    .action(async (opts: { workspace: string; company: string; asOf?: Date }) => {
      setExitCode(await creditsCommand(opts));
    });
  program
    .command('artifacts')
    .description('Recompute the hash of every stored artifact and check that every artifact an event names is stored.')
    .action(async () => {
      setExitCode(await artifactsCommand());
    });
  return program;
}

if (isMainModule(import.meta.url)) {
  void runCli(async () => {
    let code = 0;
    await auditProgram((c) => (code = c)).parseAsync(process.argv);
    return code;
  });
}
