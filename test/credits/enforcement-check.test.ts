/** The credits check of the submission path: no round trip while enforcement is known to be off (issue 19). */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { creditsEngineFor } from '../../commands/credits/engine.js';
import { checkCreditsForSubmission, ENFORCEMENT_OFF_CACHE_MS } from '../../commands/credits/metering.js';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import type { EventStore } from '../../platform/eventstore/port.js';
import { testDb } from '../support/db.js';

describe('credits check on the submission path', function () {
  this.timeout(60000);
  let store: PostgresEventStore;
  before(async () => {
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 5 });
  });
  after(async () => store.close());

  /** The real store, counting the stream reads this process's engine makes through it. */
  function counted(): { store: EventStore; reads: () => number } {
    let reads = 0;
    const wrapped = new Proxy(store, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (prop === 'readStream') return (...args: Parameters<EventStore['readStream']>) => (reads++, target.readStream(...args));
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    return { store: wrapped, reads: () => reads };
  }

  it('answers without reading the stream while enforcement is known off, reads it first with enforcement on, and sees another instance within the bound', async () => {
    const workspaceId = `ws_check_${randomUUID().slice(0, 8)}`;
    const input = () => ({ workspaceId, companyId: 'abcdefabcdefabcdefabcdef', now: new Date() });
    const here = counted();
    const engine = creditsEngineFor(here.store);
    const ctx = { now: new Date() };

    expect(await checkCreditsForSubmission({ store: here.store }, input())).to.deep.equal({ allowed: true });
    const afterFirst = here.reads();
    expect(afterFirst).to.be.greaterThan(0); // a cold cache reads the stream
    for (let i = 0; i < 5; i++) expect(await checkCreditsForSubmission({ store: here.store }, input())).to.deep.equal({ allowed: true });
    expect(here.reads()).to.equal(afterFirst); // enforcement off and known: no round trip

    // Switched on through this process: refused at once (the company has no allowance), reading first.
    await engine.execute(workspaceId, { type: 'SetEnforcement', enabled: true }, ctx);
    const refused = await checkCreditsForSubmission({ store: here.store }, input());
    expect(refused).to.include({ allowed: false, blockReason: 'NO_ACTIVE_ALLOWANCE' });
    expect(here.reads()).to.be.greaterThan(afterFirst);

    // Another instance (its own engine) switches it off, then on again.
    const elsewhere = creditsEngineFor(counted().store);
    await elsewhere.execute(workspaceId, { type: 'SetEnforcement', enabled: false }, ctx);
    expect(await checkCreditsForSubmission({ store: here.store }, input())).to.deep.equal({ allowed: true }); // on here: read, sees off
    await elsewhere.execute(workspaceId, { type: 'SetEnforcement', enabled: true }, ctx);
    // Within the bound this instance may still answer from its cache; after it, it reads and refuses.
    await new Promise((r) => setTimeout(r, ENFORCEMENT_OFF_CACHE_MS + 100));
    expect(await checkCreditsForSubmission({ store: here.store }, input())).to.include({ allowed: false, blockReason: 'NO_ACTIVE_ALLOWANCE' });
  });

  it('never reads for a document of no company', async () => {
    const here = counted();
    expect(await checkCreditsForSubmission({ store: here.store }, { workspaceId: 'ws_none', companyId: null, now: new Date() })).to.deep.equal({ allowed: true });
    expect(here.reads()).to.equal(0);
  });
});
