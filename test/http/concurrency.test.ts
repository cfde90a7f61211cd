/**
 * Many writers on one aggregate (issue 12, class 3): every command that can lose the race for
 * its stream's revision answers its success, a refusal of the domain, or the family's 409 with
 * `retryable: true` — never a 500 — under 50 parallel writers.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { WrongExpectedVersionError } from '../../platform/eventstore/port.js';
import { CONFLICT_RETRY_BUDGET_MS, ConcurrencyConflictError, execute } from '../../commands/execute.js';
import { workspaceDecider } from '../../domain/workspace/workspace.js';
import { connectError, freshName, newClient } from '../connect/support.js';
import { allowanceBody, createCurrent, creditsTenant, issue } from '../credits/support.js';
import { startTestService, type TestService } from '../support/http.js';

const WRITERS = 50;

type Response = { status: number; json: any; text: string; headers: Headers };

/** Every answer is one of `allowed`, or a Connect 409 marked retryable; never a 5xx. */
function expectNoServerError(responses: Response[], allowed: number[]): void {
  for (const r of responses) {
    expect(r.status, r.text.slice(0, 300)).to.be.below(500);
    expect(r.headers.get('x-request-id')).to.be.a('string');
    if (!allowed.includes(r.status)) {
      expect(r.status, r.text.slice(0, 300)).to.equal(409);
      expect(connectError(r).retryable, r.text).to.equal(true);
    }
  }
}

describe('HTTP: 50 parallel writers on one aggregate', function () {
  this.timeout(180000);
  let t: TestService;

  before(async () => {
    t = await startTestService();
  });
  after(async () => t.close());

  it('company and source PATCHes of one source (company stream)', async () => {
    const c = await newClient(t);
    const company = await c.onboard();
    const path = `/v3/connect/companies/${encodeURIComponent(company.sourceName)}?sourceVersion=${company.sourceVersion}`;
    const responses = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) => c.patch(path, i % 2 === 0 ? { legalName: `Acme ${i} LLC` } : { metadata: { writer: i } })),
    );
    expectNoServerError(responses, [200]);
    expect(responses.filter((r) => r.status === 200).length).to.be.greaterThan(0);
  });

  it('branches added to one company at once (company stream and one source claim each)', async () => {
    const c = await newClient(t);
    const company = await c.onboard();
    const responses = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) =>
        c.post(`/v3/connect/companies/${company.companyId}/branches`, { branchName: `Branch ${i}`, sourceName: freshName('Branch'), sourceVersion: 'v1' }),
      ),
    );
    expectNoServerError(responses, [201]);
    expect(responses.filter((r) => r.status === 201).length).to.be.greaterThan(0);
  });

  it('sources: one source name claimed by 50 onboardings at once (one wins, the others are refused)', async () => {
    const c = await newClient(t);
    const sourceName = freshName('Contended');
    const bodies = await Promise.all(Array.from({ length: WRITERS }, () => c.newCompanyBody({ sourceName })));
    const responses = await Promise.all(bodies.map((b) => c.post('/v3/connect/companies', b)));
    const refused = responses.filter((r) => r.status === 409 && r.json.error.code === 'CONNECT_SOURCE_ALREADY_EXISTS');
    expectNoServerError(
      responses.filter((r) => !refused.includes(r)),
      [201],
    );
    expect(responses.filter((r) => r.status === 201).length).to.equal(1);
  });

  it('allowances: 50 replacements with the same If-Match (one wins, the others 412)', async () => {
    const c = await creditsTenant(t);
    await issue(t, c.workspaceId, 1000);
    await createCurrent(c, t.clock.now(), { limit: 10 });
    const responses = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) =>
        c.write('PUT', `/allowances/${c.companyId}/current`, allowanceBody(t.clock.now(), { limit: 20 + i }), { 'if-match': '"1"' }),
      ),
    );
    expectNoServerError(responses, [200, 412]);
    expect(responses.filter((r) => r.status === 200).length).to.equal(1);
  });

  it('idempotency claims: 50 identical requests with one Idempotency-Key execute once', async () => {
    const c = await newClient(t);
    const company = await c.onboard();
    const key = randomUUID();
    const body = { metadata: { idempotent: true } };
    const path = `/v3/connect/companies/${encodeURIComponent(company.sourceName)}?sourceVersion=${company.sourceVersion}`;
    const responses = await Promise.all(
      Array.from({ length: WRITERS }, () =>
        fetch(`${t.url}${path}`, { method: 'PATCH', headers: { 'x-api-key': c.apiKey, 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) }).then(
          async (r) => ({ status: r.status, headers: r.headers, text: await r.text() }),
        ),
      ),
    );
    const parsed = responses.map((r) => ({ ...r, json: JSON.parse(r.text) }));
    expectNoServerError(parsed, [200]);
    const fresh = parsed.filter((r) => r.status === 200 && r.headers.get('idempotent-replayed') !== 'true');
    expect(fresh.length).to.equal(1);
  });

  it('a command that keeps losing its race ends in ConcurrencyConflictError within its budget, nothing written', async () => {
    const store = t.service.runtime.store;
    // A store whose every append loses the race: the budget, not an attempt count, ends the retries.
    const losing = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'append') {
          return async () => {
            throw new WrongExpectedVersionError('workspace-x', 'no_stream', 0n);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    const started = Date.now();
    let caught: unknown;
    try {
      await execute(losing, workspaceDecider, `workspace-${randomUUID()}`, { type: 'CreateWorkspace', workspaceId: 'ws_x', name: 'x' } as never, { now: new Date() }, { retryBudgetMs: 300 });
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(ConcurrencyConflictError);
    expect((caught as ConcurrencyConflictError).attempts).to.be.greaterThan(1);
    // It stops before a pause would overrun the given budget (300 ms), long before the default one (5 s).
    expect(Date.now() - started).to.be.below(CONFLICT_RETRY_BUDGET_MS);
  });
});
