/** Root hooks: one real PostgreSQL for the whole run, migrated once. */
import { closeTestDatabase, openTestDatabase } from './db.js';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    await openTestDatabase();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await closeTestDatabase();
  },
};
