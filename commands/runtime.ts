/**
 * The shared resources of a process (server, admin CLI, tools): configuration, the database
 * (its server's version and extensions checked, then migrated to the latest schema) and the
 * event store. Closing releases them in reverse order.
 */
import { openEventStore } from '../platform/eventstore/index.js';
import type { EventStore } from '../platform/eventstore/port.js';
import { migrateToLatest } from '../readmodels/migrations/index.js';
import { checkServerRequirements } from '../readmodels/server-requirements.js';
import { loadConfig, type Config } from '../platform/config.js';
import { openDatabase, type Database } from '../platform/database.js';

export interface Runtime {
  readonly config: Config;
  readonly db: Database;
  readonly store: EventStore;
  close(): Promise<void>;
}

export async function openRuntime(
  config: Config = loadConfig(),
  options: { log?: (msg: string) => void; poolSize?: number } = {},
): Promise<Runtime> {
  const db = await openDatabase(config, options);
  try {
    // A server the service cannot run on (version, extensions) is refused before any migration;
    // closing the database stops an embedded server this process started.
    await checkServerRequirements(db.url);
    await migrateToLatest(db.knex);
    const store = await openEventStore(config, db.url);
    return {
      config,
      db,
      store,
      async close() {
        await store.close();
        await db.close();
      },
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}
