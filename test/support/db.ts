/**
 * The test database: a real PostgreSQL. With DATABASE_URL unset, an embedded server in
 * var/pg-test (port EMBEDDED_PG_PORT, default 54339) and one fresh database per test
 * process, dropped at the end; databases left by killed runs are dropped at the next start.
 */
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { loadConfig, type Config } from '../../platform/config.js';
import { openDatabase, type Database } from '../../platform/database.js';
import { PreparingPgClient } from '../../platform/prepared-statements.js';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { migrateToLatest, migrations } from '../../readmodels/migrations/index.js';

let database: Database | null = null;
let serverUrl: string | null = null;
let config: Config | null = null;

export function testConfig(): Config {
  config ??= loadConfig({
    ...process.env,
    EMBEDDED_PG_DIR: process.env.EMBEDDED_PG_DIR || 'var/pg-test',
    EMBEDDED_PG_PORT: process.env.TEST_EMBEDDED_PG_PORT || '54339',
    EMBEDDED_PG_DATABASE: `einvoicing_test_${process.pid}`,
    LOG_LEVEL: process.env.LOG_LEVEL || 'silent',
  });
  return config;
}

async function dropStaleTestDatabases(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: `${url}/postgres` });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>("select datname from pg_database where datname like 'einvoicing_test_%'");
    for (const { datname } of rows) {
      const pid = Number(datname.slice('einvoicing_test_'.length));
      let alive = true;
      try {
        process.kill(pid, 0);
      } catch {
        alive = false;
      }
      if (!alive) await client.query(`drop database if exists "${datname}" with (force)`);
    }
  } finally {
    await client.end();
  }
}

export async function openTestDatabase(): Promise<Database> {
  if (database) return database;
  const cfg = testConfig();
  database = await openDatabase(cfg, { poolSize: 40 });
  if (!cfg.databaseUrl) {
    serverUrl = database.url.slice(0, database.url.lastIndexOf('/'));
    await dropStaleTestDatabases(serverUrl);
  }
  await migrateToLatest(database.knex);
  return database;
}

export function testDb(): Database {
  if (!database) throw new Error('test database not opened: test/support/hooks.ts opens it before all tests');
  return database;
}

export async function closeTestDatabase(): Promise<void> {
  if (!database) return;
  const db = database;
  database = null;
  await db.knex.destroy();
  if (serverUrl) {
    const client = new pg.Client({ connectionString: `${serverUrl}/postgres` });
    await client.connect();
    await client.query(`drop database if exists "einvoicing_test_${process.pid}" with (force)`).catch(() => {});
    await client.end();
  }
  await db.close();
}

/**
 * A fresh, migrated database of its own on the test server, for a test that must see only its
 * own log (e.g. one that rebuilds every read model and compares whole tables); `drop` closes
 * and drops it.
 */
export async function openOwnTestDatabase(suffix: string): Promise<{ db: Database; drop(): Promise<void> }> {
  const name = `einvoicing_test_${process.pid}_${suffix}`;
  // Created through the test database's connection and opened by URL, on the embedded server as on
  // an external one: the database joins the test server without owning it, so closing it never
  // stops the server the rest of the run still uses (an embedded owner stops it when it counts no
  // other client, and the test pool may hold no connection at that instant).
  const serverUrl = testDb().url.slice(0, testDb().url.lastIndexOf('/'));
  await testDb().knex.raw(`drop database if exists "${name}" with (force)`);
  await testDb().knex.raw(`create database "${name}"`);
  const own = loadConfig({ ...process.env, DATABASE_URL: `${serverUrl}/${name}`, LOG_LEVEL: process.env.LOG_LEVEL || 'silent' });
  const db = await openDatabase(own, { poolSize: 20 });
  await migrateToLatest(db.knex);
  return {
    db,
    async drop() {
      await db.close();
      await testDb().knex.raw(`drop database if exists "${name}" with (force)`).catch(() => {});
    },
  };
}

/**
 * A fresh database of its own on the test server with the schema as it was before `migration`
 * (the migrations ahead of it applied), to test that migration on an existing database. `drop`
 * closes and drops it.
 */
export async function openDatabaseBefore(
  suffix: string,
  migration: (typeof migrations)[number],
): Promise<{ knex: Knex; url: string; drop(): Promise<void> }> {
  const name = `einvoicing_test_${process.pid}_${suffix}`;
  const serverUrl = testDb().url.slice(0, testDb().url.lastIndexOf('/'));
  await testDb().knex.raw(`drop database if exists "${name}" with (force)`);
  await testDb().knex.raw(`create database "${name}"`);
  const url = `${serverUrl}/${name}`;
  // The service's client, so what the test runs on this database (a rebuild) runs as in the service.
  const knex = knexFactory({ client: PreparingPgClient, connection: url, pool: { min: 0, max: 4 } });
  const before = migrations.slice(0, migrations.indexOf(migration));
  const source: Knex.MigrationSource<(typeof migrations)[number]> = { getMigrations: async () => [...before], getMigrationName: (m) => m.name, getMigration: async (m) => m };
  await knex.migrate.latest({ migrationSource: source });
  return {
    knex,
    url,
    async drop() {
      await knex.destroy();
      await testDb().knex.raw(`drop database if exists "${name}" with (force)`);
    },
  };
}

/**
 * A database as openDatabaseBefore leaves it (with `latestFirst`, then migrated to the latest),
 * with the service's event store connected to it; `drop()` closes the store and drops the database.
 */
export async function openEventStoreBefore(
  suffix: string,
  migration: (typeof migrations)[number],
  options: { latestFirst?: boolean } = {},
): Promise<{ knex: Knex; url: string; store: PostgresEventStore; drop(): Promise<void> }> {
  const own = await openDatabaseBefore(suffix, migration);
  try {
    if (options.latestFirst) await migrateToLatest(own.knex);
    const store = await PostgresEventStore.connect(own.url, { poolSize: 4 });
    return {
      ...own,
      store,
      async drop() {
        await store.close();
        await own.drop();
      },
    };
  } catch (err) {
    await own.drop();
    throw err;
  }
}
