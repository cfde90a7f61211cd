/** Webhook subscription management (/v3/connect/webhooks): create, list, read, update, delete, access, and every bad body. */
import { expect } from 'chai';
import { ManualClock } from '../../platform/clock.js';
import { isNonPublicAddress, urlProblem } from '../../domain/webhooks/targets.js';
import { webhookSubscriptionStream } from '../../domain/webhooks/values.js';
import { startTestService, type TestService } from '../support/http.js';
import { WEBHOOKS, webhooksClient } from './support.js';
import { call } from '../support/http.js';
import { SecretOpenError, secretBox } from '../../commands/webhooks/secrets.js';
import { randomBytes } from 'node:crypto';

describe('webhooks: subscriptions', function () {
  this.timeout(60000);
  let t: TestService;
  const clock = new ManualClock('2026-06-01T00:00:00Z');

  before(async () => {
    t = await startTestService({ clock, startWorkers: false, config: (c) => ({ ...c, webhooks: { ...c.webhooks, allowPrivateTargets: true } }) });
  });
  after(async () => t.close());

  const valid = { webhookUrl: 'https://hooks.example.com/credits', events: ['isv.credits.pool.low', 'purchase.invoice.stored'] };

  it('creates, reads, lists, updates (rotating the secret) and deletes; the secret is never returned', async () => {
    const tenant = await t.tenant();
    const w = webhooksClient(t, tenant.apiKey);
    const created = await w.create({ ...valid, secretKey: 'top-secret-value', description: 'ERP' }, 'test');
    expect(created.status, created.text).to.equal(201);
    const s = created.json.data;
    expect(s).to.include({ webhookUrl: valid.webhookUrl, environment: 'sandbox', signatureAlgorithm: 'sha256', hasSecret: true, description: 'ERP', active: true });
    expect(s.events).to.deep.equal(valid.events);
    expect(s.id).to.match(/^whk_[0-9a-f]{24}$/);
    expect(created.headers.get('location')).to.equal(`${WEBHOOKS}/${s.id}`);
    expect(created.text).to.not.contain('top-secret-value');

    const prod = await w.create({ ...valid, signatureAlgorithm: 'sha512' }, '');
    expect(prod.status).to.equal(201);
    expect(prod.json.data).to.include({ environment: 'production', signatureAlgorithm: 'sha512', hasSecret: false });

    const one = await w.get(s.id);
    expect(one.status).to.equal(200);
    expect(one.json.data).to.deep.equal(s);
    const list = await w.list('?limit=1');
    expect(list.json.data.items).to.have.length(1);
    const rest = await w.list(`?limit=1&cursor=${list.json.data.nextCursor}`);
    expect(rest.json.data.items).to.have.length(1);
    expect(rest.json.data.nextCursor).to.equal(null);
    expect([list.json.data.items[0].id, rest.json.data.items[0].id].sort()).to.deep.equal([s.id, prod.json.data.id].sort());
    expect(list.text + rest.text + one.text).to.not.contain('top-secret-value');

    const patched = await w.patch(s.id, { events: ['isv.credits.pool.exhausted'], secretKey: 'rotated-secret', active: false, description: null });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.json.data).to.include({ active: false, hasSecret: true, description: null });
    expect(patched.json.data.events).to.deep.equal(['isv.credits.pool.exhausted']);
    expect(patched.text).to.not.contain('rotated-secret');
    const unsigned = await w.patch(s.id, { secretKey: null });
    expect(unsigned.json.data.hasSecret).to.equal(false);

    // Auditable: the history is in the subscription's stream.
    const events = await t.service.runtime.store.readStream(webhookSubscriptionStream(s.id));
    expect(events.map((e) => e.type)).to.deep.equal(['WebhookSubscriptionCreated', 'WebhookSubscriptionUpdated', 'WebhookSubscriptionUpdated']);
    // The secrets are sealed at rest: neither the log (what the audit prints) nor the read model holds them in clear.
    const logged = JSON.stringify(events.map((e) => e.data));
    expect(logged).to.not.contain('top-secret-value');
    expect(logged).to.not.contain('rotated-secret');
    const sealed = (events[0]!.data as { secretKey: string }).secretKey;
    expect(sealed).to.match(/^enc:v1:/);
    const box = secretBox(t.service.deps.config.webhooks.secretEncryptionKey);
    expect(box.open(s.id, sealed)).to.equal('top-secret-value');
    expect(box.open(s.id, (events[1]!.data as { secretKey: string }).secretKey)).to.equal('rotated-secret');
    const stored = await t.service.deps.knex('webhook_subscriptions').where({ subscription_id: s.id }).first();
    expect(JSON.stringify(stored)).to.not.contain('rotated-secret');

    const del = await w.remove(s.id);
    expect(del.status).to.equal(200);
    expect((await w.get(s.id)).status).to.equal(404);
    expect((await w.remove(s.id)).status).to.equal(404);
    expect((await w.patch(s.id, { active: true })).status).to.equal(404);

    // Another workspace sees none of them.
    const other = webhooksClient(t, (await t.tenant()).apiKey);
    expect((await other.get(prod.json.data.id)).status).to.equal(404);
    expect((await other.list()).json.data.items).to.deep.equal([]);
  });

  it('refuses each bad body with a 400 naming the field', async () => {
    const w = webhooksClient(t, (await t.tenant()).apiKey);
    const cases: [unknown, string, (string | number)[], string?][] = [
      [{ ...valid, webhookUrl: 'not a url' }, 'sandbox', ['webhookUrl']],
      [{ ...valid, webhookUrl: 'ftp://example.com/x' }, 'sandbox', ['webhookUrl']],
      [{ ...valid, webhookUrl: 'http://hooks.example.com/x' }, 'production', ['webhookUrl']], // https only in production
      [{ ...valid, webhookUrl: 'https://127.0.0.1/x' }, 'production', ['webhookUrl']], // loopback
      [{ ...valid, webhookUrl: 'https://10.1.2.3/x' }, 'production', ['webhookUrl']], // private
      [{ ...valid, webhookUrl: 'https://169.254.169.254/latest' }, 'production', ['webhookUrl']], // metadata
      [{ ...valid, webhookUrl: 'https://[::1]/x' }, 'production', ['webhookUrl']],
      [{ ...valid, webhookUrl: 'https://localhost/x' }, 'production', ['webhookUrl']],
      [{ ...valid, webhookUrl: 'https://user:pw@hooks.example.com/x' }, 'sandbox', ['webhookUrl']],
      [{ ...valid, webhookUrl: undefined }, 'sandbox', ['webhookUrl']],
      [{ ...valid, events: ['isv.credits.pool.low', 'isv.credits.nope'] }, 'sandbox', ['events', '1'], 'isv.credits.nope'],
      [{ ...valid, events: [] }, 'sandbox', ['events']],
      [{ ...valid, events: ['isv.credits.pool.low', 'isv.credits.pool.low'] }, 'sandbox', ['events', '1']],
      [{ ...valid, events: 'isv.credits.pool.low' }, 'sandbox', ['events']],
      [{ ...valid, secretKey: 'x'.repeat(257) }, 'sandbox', ['secretKey']],
      [{ ...valid, secretKey: '' }, 'sandbox', ['secretKey']],
      [{ ...valid, signatureAlgorithm: 'md5' }, 'sandbox', ['signatureAlgorithm']],
      [{ ...valid, description: 'd'.repeat(501) }, 'sandbox', ['description']],
      [{ ...valid, extra: 1 }, 'sandbox', ['extra']],
      [[valid], 'sandbox', []],
    ];
    for (const [body, env, path, named] of cases) {
      const r = await w.create(body, env);
      expect(r.status, `${JSON.stringify(body).slice(0, 120)}: ${r.text}`).to.equal(400);
      expect(r.json.success).to.equal(false);
      expect(r.json.error.code).to.equal('CONNECT_VALIDATION_ERROR');
      expect(r.json.error.path ?? [], r.text).to.deep.equal(path);
      if (named) expect(r.json.error.message).to.contain(named);
    }
    expect((await w.create({ ...valid, secretKey: 'x'.repeat(256) })).status).to.equal(201);
    const badEnv = await w.create(valid, 'staging');
    expect(badEnv.status).to.equal(400);
    expect(badEnv.json.error.code).to.equal('CONNECT_INVALID_ENVIRONMENT');
    const id = (await w.create(valid, '')).json.data.id;
    for (const [body, path] of [
      [{}, []],
      [{ active: 'yes' }, ['active']],
      [{ events: ['nope'] }, ['events', '0']],
      [{ webhookUrl: 'http://hooks.example.com/' }, ['webhookUrl']], // a production subscription
      [{ secretKey: 'y'.repeat(257) }, ['secretKey']],
      [{ id: 'x' }, ['id']],
    ] as const) {
      const r = await w.patch(id, body);
      expect(r.status, r.text).to.equal(400);
      expect(r.json.error.path ?? []).to.deep.equal(path);
    }
    expect((await w.get('whk_nope')).status).to.equal(404);
    expect((await w.get('whk_nope')).json.error.code).to.equal('CONNECT_WEBHOOK_NOT_FOUND');
  });

  it('lets owners, admins and partners with write keys manage; members and read-only keys only read', async () => {
    const tenant = await t.tenant({ role: 'owner' });
    const owner = webhooksClient(t, tenant.apiKey);
    const id = (await owner.create(valid)).json.data.id;
    for (const role of ['admin', 'partner'] as const) {
      const k = await t.key(tenant.workspaceId, { role });
      expect((await webhooksClient(t, k.apiKey).create(valid)).status, role).to.equal(201);
    }
    for (const opts of [{ role: 'member' as const }, { role: 'owner' as const, permission: 'read' as const }]) {
      const k = await t.key(tenant.workspaceId, opts);
      const c = webhooksClient(t, k.apiKey);
      const r = await c.create(valid);
      expect(r.status).to.equal(403);
      expect(r.json.error.code).to.equal('CONNECT_INSUFFICIENT_PERMISSION');
      expect((await c.remove(id)).status).to.equal(403);
      expect((await c.test(id)).status).to.equal(403);
      expect((await c.get(id)).status).to.equal(200);
    }
    const anonymous = await call(`${t.url}${WEBHOOKS}`);
    expect(anonymous.status).to.equal(401);
  });

  it('knows which addresses are not public', () => {
    for (const a of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.100.100.200', '0.0.0.0', '::1', 'fe80::1', 'fd00:ec2::254', '::ffff:127.0.0.1', '::ffff:7f00:1', '224.0.0.1']) {
      expect(isNonPublicAddress(a), a).to.equal(true);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) expect(isNonPublicAddress(a), a).to.equal(false);
    // Private targets only for sandbox subscriptions, and only when the operator allows them.
    expect(urlProblem('http://127.0.0.1:9/x', { environment: 'sandbox', allowPrivateTargets: true })).to.equal(null);
    expect(urlProblem('http://127.0.0.1:9/x', { environment: 'sandbox', allowPrivateTargets: false })).to.be.a('string');
    expect(urlProblem('https://127.0.0.1:9/x', { environment: 'production', allowPrivateTargets: true })).to.be.a('string');
  });
  it('seals secrets with AES-256-GCM bound to the subscription; a plain secret written before sealing is used as it is', () => {
    const key = randomBytes(32);
    const box = secretBox(key);
    const sealed = box.seal('whk_a', 'my secret ✓');
    expect(sealed).to.match(/^enc:v1:[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).to.not.equal(box.seal('whk_a', 'my secret ✓')); // a fresh IV each time
    expect(box.open('whk_a', sealed)).to.equal('my secret ✓');
    expect(() => box.open('whk_b', sealed)).to.throw(SecretOpenError);
    expect(() => secretBox(randomBytes(32)).open('whk_a', sealed)).to.throw(SecretOpenError);
    expect(() => secretBox(null).open('whk_a', sealed)).to.throw(SecretOpenError);
    expect(box.open('whk_a', 'legacy-plain-secret')).to.equal('legacy-plain-secret');
    expect(secretBox(null).development).to.equal(true);
    expect(box.development).to.equal(false);
  });
});
