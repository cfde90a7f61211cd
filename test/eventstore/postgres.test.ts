import { PostgresEventStore } from '../../commands/eventstore/postgres.js';
import { eventStoreContract } from './contract.js';
import { testDb } from '../support/db.js';

eventStoreContract('postgres', async () => PostgresEventStore.connect(testDb().url, { poolSize: 30 }), 'never skipped');
eventStoreContract(
  'postgres (serialized appends)',
  async () => PostgresEventStore.connect(testDb().url, { poolSize: 30, serializeAppends: true }),
  'never skipped',
);
