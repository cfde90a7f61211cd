/** GET /metrics (Prometheus text format, prom-client): scraped after a submit, every family and every metric of the README is there. */
import { expect } from 'chai';
import { call, startTestService, type TestService } from '../support/http.js';
import { unifyTenant, uaeInvoice, type UnifyTenant } from '../unify/support.js';

function samples(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

describe('Prometheus metrics at GET /metrics', function () {
  this.timeout(90000);
  let t: TestService;
  let u: UnifyTenant;

  before(async () => {
    t = await startTestService({ config: (c) => ({ ...c, connectRateLimit: { perSecond: 0.5, burst: 4 } }) });
    u = await unifyTenant(t);
  });
  after(async () => t.close());

  it('counts and times requests by family, route template and status, and exposes the store, projection, delivery, idempotency and rate-limit metrics', async () => {
    const request = u.request(uaeInvoice());
    const submitted = await u.submit(request, { 'idempotency-key': 'metrics-1' });
    expect(submitted.status, submitted.text).to.equal(200);
    const replayed = await u.submit(request, { 'idempotency-key': 'metrics-1' });
    expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
    expect((await u.status(submitted.json.documentId)).status).to.equal(200);
    expect((await u.legacy({ action: 'list', env: 'sandbox', filters: { uuid: 'x', documentId: 'y' } })).status).to.equal(200);
    // Connect until the workspace's rate limit refuses one.
    let refused = false;
    for (let i = 0; i < 12 && !refused; i++) refused = (await u.client.get('/v3/connect/companies')).status === 429;
    expect(refused).to.equal(true);
    expect((await call(`${t.url}/healthz`)).status).to.equal(200);
    // Delivery runs after the answer: wait for the document to be final.
    for (let i = 0; ; i++) {
      const r = await u.status(submitted.json.documentId);
      if (r.json.data.isTerminal) break;
      if (i > 100) throw new Error('not delivered');
      await new Promise((res) => setTimeout(res, 100));
    }

    // Workers tick on their interval (1 s for delivery): scrape until one has ticked.
    let r = await call(`${t.url}/metrics`);
    for (let i = 0; i < 100 && samples(r.text, 'worker_ticks_total').length === 0; i++) {
      await new Promise((res) => setTimeout(res, 100));
      r = await call(`${t.url}/metrics`);
    }
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.contain('text/plain');
    const text = r.text;
    const http = samples(text, 'http_requests_total');
    for (const family of ['unify', 'unify_legacy', 'documents', 'connect', 'system']) {
      expect(http.some((l) => l.includes(`family="${family}"`)), `family ${family}`).to.equal(true);
    }
    expect(http.some((l) => l.includes('route="/api/v3/unify"') && l.includes('status="200"') && l.includes('method="POST"'))).to.equal(true);
    expect(http.some((l) => l.includes('route="/api/v3/documents/:documentId"'))).to.equal(true);
    expect(http.some((l) => l.includes('family="connect"') && l.includes('status="429"'))).to.equal(true);
    expect(samples(text, 'http_request_duration_seconds_bucket').length).to.be.greaterThan(0);
    expect(Number(samples(text, 'eventstore_append_duration_seconds_count')[0]?.split(' ').pop())).to.be.greaterThan(0);
    expect(samples(text, 'eventstore_group_commit_batch_appends_count').length).to.equal(1);
    expect(samples(text, 'projection_lag_events').some((l) => l.includes('projection="documents"'))).to.equal(true);
    expect(samples(text, 'projection_lag_seconds').some((l) => l.includes('projection="documents"'))).to.equal(true);
    expect(samples(text, 'delivery_attempts_total').some((l) => l.includes('outcome="delivered"'))).to.equal(true);
    expect(samples(text, 'idempotency_replays_total').some((l) => l.includes('family="unify"'))).to.equal(true);
    expect(samples(text, 'rate_limit_refusals_total').some((l) => l.includes('family="connect"'))).to.equal(true);
    expect(samples(text, 'worker_ticks_total').length).to.be.greaterThan(0);
    expect(text).to.contain('# HELP webhook_delivery_attempts_total');
    expect(text).to.contain('process_cpu_user_seconds_total');
    expect(text).to.contain('nodejs_eventloop_lag_seconds');
  });
});
