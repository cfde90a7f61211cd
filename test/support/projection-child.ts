/** Runs the test projection until killed; used by the kill-at-any-instant test. */
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import knexFactory from 'knex';
import { PreparingPgClient } from '../../platform/prepared-statements.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { testProjection } from './test-projection.js';

const url = process.argv[2]!;
const knex = knexFactory({ client: PreparingPgClient, connection: url, pool: { min: 0, max: 5 } });
const store = await PostgresEventStore.connect(url, { poolSize: 5 });
const runner = new ProjectionRunner(knex, store, [testProjection()], { batchSize: 50 });
await runner.init();
runner.start();
process.stdout.write('started\n');
