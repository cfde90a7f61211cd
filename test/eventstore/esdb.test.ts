/**
 * The event-store contract against EventStoreDB. Needs a server:
 *   EVENTSTOREDB_URL=esdb://localhost:2113?tls=false npx mocha test/eventstore/esdb.test.ts
 * (the "large events" case needs the server's max append size above 2 MB, e.g.
 * EVENTSTORE_MAX_APPEND_SIZE=4194304). Without the variable the suite is skipped.
 */
import { EventStoreDbEventStore } from '../../platform/eventstore/esdb.js';
import { eventStoreContract } from './contract.js';

eventStoreContract(
  'eventstoredb',
  async () => {
    const url = process.env.EVENTSTOREDB_URL;
    if (!url) return null;
    return EventStoreDbEventStore.connect(url);
  },
  'no server: set EVENTSTOREDB_URL to run it',
);
