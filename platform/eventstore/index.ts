/** Chooses the event-store adapter from the configuration: EventStoreDB when EVENTSTORE_URL is set, else PostgreSQL. */
import type { Config } from '../config.js';
import type { EventStore } from './port.js';

export async function openEventStore(config: Config, databaseUrl: string): Promise<EventStore> {
  if (config.eventStoreUrl) {
    const { EventStoreDbEventStore } = await import('./esdb.js');
    return EventStoreDbEventStore.connect(config.eventStoreUrl);
  }
  const { PostgresEventStore } = await import('./postgres.js');
  return PostgresEventStore.connect(databaseUrl, { poolSize: config.dbPoolSize });
}
