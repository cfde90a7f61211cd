/**
 * Shared plumbing of the command-line tools (audit, rebuild): opening the runtime against the
 * server's database, turning expected failures into one clear line on stderr with a meaningful
 * exit code, and JSON output with bigints as strings.
 *
 * Exit codes: 0 success; 1 operational failure (database unreachable, unknown stream, a failed
 * rebuild); 2 usage error (bad arguments or options, unknown projection, bad configuration);
 * 130 interrupted by a signal.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CommanderError } from 'commander';
import { ConfigError, loadConfig, type Config } from '../platform/config.js';
import { DatabaseUnavailableError } from '../platform/database.js';
import { openRuntime, type Runtime } from '../commands/runtime.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERRUPTED = 130;

/** A failure the user can act on: printed as one line (no stack trace) with its exit code. */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  constructor(message: string, readonly exitCode: number = EXIT_FAILURE) {
    super(message);
  }
}

/** Bad arguments that commander cannot check itself (exit code 2). */
export class UsageError extends CliError {
  override readonly name: string = 'UsageError';
  constructor(message: string) {
    super(message, EXIT_USAGE);
  }
}

/** True when `importMetaUrl` is the module node was started with (the CLI entry point). */
export function isMainModule(importMetaUrl: string): boolean {
  const entry = process.argv[1];
  return entry !== undefined && importMetaUrl === pathToFileURL(entry).href;
}

/** JSON.stringify with bigints as decimal strings, Maps as objects and Sets as arrays (aggregate states use them). */
export function toJson(value: unknown, space?: number): string {
  return JSON.stringify(
    value,
    (_key, v: unknown) => {
      if (typeof v === 'bigint') return v.toString();
      if (v instanceof Map) return Object.fromEntries(v);
      if (v instanceof Set) return [...v];
      return v;
    },
    space,
  );
}

/** pg connection errors that mean "the database cannot be reached" rather than a bug. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', '28P01', '28000', '3D000', '57P03']);

/** The exit code and the one line to print for an error, or null when it is unexpected (a bug). */
export function describeError(err: unknown): { exitCode: number; message: string } | null {
  if (err instanceof CommanderError) {
    // Commander has already printed its message (or the help).
    return { exitCode: err.exitCode === 0 ? EXIT_OK : EXIT_USAGE, message: '' };
  }
  if (err instanceof CliError) return { exitCode: err.exitCode, message: err.message };
  if (err instanceof DatabaseUnavailableError) return { exitCode: EXIT_FAILURE, message: err.message };
  if (err instanceof ConfigError) return { exitCode: EXIT_USAGE, message: `configuration error: ${err.message}` };
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) {
    return { exitCode: EXIT_FAILURE, message: `cannot reach the database: ${(err as Error).message} (${code})` };
  }
  return null;
}

function flush(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve();
    stream.write('', () => resolve());
  });
}

/** Flushes stdout and stderr, then ends the process (lingering sockets or timers cannot keep it alive). */
export async function exitWith(code: number): Promise<never> {
  await Promise.all([flush(process.stdout), flush(process.stderr)]);
  process.exit(code);
}

type Cleanup = () => Promise<void>;
const cleanups: Cleanup[] = [];

/** Registers cleanup to run (last first) when the process is interrupted by SIGINT/SIGTERM. */
export function onInterrupt(cleanup: Cleanup): () => void {
  cleanups.push(cleanup);
  return () => {
    const i = cleanups.indexOf(cleanup);
    if (i !== -1) cleanups.splice(i, 1);
  };
}

/**
 * Runs a CLI's main function: its result is the exit code. Expected errors print one line on
 * stderr; unexpected ones (bugs) print their stack. The process always ends.
 */
export async function runCli(main: () => Promise<number>): Promise<never> {
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      if (interrupted) return;
      interrupted = true;
      process.stderr.write(`\ninterrupted (${signal})\n`);
      void (async () => {
        while (cleanups.length > 0) await cleanups.pop()!().catch(() => {});
        await exitWith(EXIT_INTERRUPTED);
      })();
    });
  }
  let code: number;
  try {
    code = await main();
  } catch (err) {
    const known = describeError(err);
    if (known) {
      if (known.message) process.stderr.write(`error: ${known.message}\n`);
      code = known.exitCode;
    } else {
      process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      code = EXIT_FAILURE;
    }
  }
  return exitWith(code);
}

/**
 * Opens the runtime the server uses (same configuration, same database; migrated to the latest
 * schema), runs `fn` and closes the runtime whatever happens.
 */
export async function withRuntime<T>(fn: (runtime: Runtime) => Promise<T>): Promise<T> {
  const config = await cliConfig();
  const runtime = await openRuntime(config, { log: (msg) => process.stderr.write(`${msg}\n`) });
  const forget = onInterrupt(() => runtime.close());
  try {
    return await fn(runtime);
  } finally {
    forget();
    await runtime.close();
  }
}

/**
 * The port of the embedded PostgreSQL running on `dataDir`, read from its postmaster.pid
 * (line 4), or null when none runs there.
 */
export async function runningEmbeddedPort(dataDir: string): Promise<number | null> {
  const text = await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8').catch(() => null);
  if (text === null) return null;
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return null;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as { code?: string }).code !== 'EPERM') return null; // a stale file: no such process
  }
  return port;
}

/**
 * The configuration of the command-line tools: the server's (the same environment variables,
 * `loadConfig`), except that with the embedded database, a PostgreSQL already running on the
 * data directory (`EMBEDDED_PG_DIR`, `var/pg` by default) is joined on the port it listens on,
 * so a tool finds the server's database even when started without the server's
 * `EMBEDDED_PG_PORT`.
 */
export async function cliConfig(
  env: NodeJS.ProcessEnv = process.env,
  log: (msg: string) => void = (msg) => process.stderr.write(`${msg}\n`),
): Promise<Config> {
  const config = loadConfig(env);
  if (config.databaseUrl) return config;
  const port = await runningEmbeddedPort(config.embeddedPg.dataDir);
  if (port === null || port === config.embeddedPg.port) return config;
  log(`joining the embedded PostgreSQL running in ${config.embeddedPg.dataDir} on port ${port}`);
  return { ...config, embeddedPg: { ...config.embeddedPg, port } };
}
