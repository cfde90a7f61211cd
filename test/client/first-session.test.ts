/**
 * The README's first session, through the TypeScript client package against the real server:
 * workspace, key and ASP authorization with the admin CLI; a Connect company; the example UAE
 * tax invoice submitted (with an Idempotency-Key, replayed on retry); its status polled to a
 * terminal state; unknown members answered with warnings; webhook signatures verified.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { createClient, verifyWebhookSignature, type UnifySubmission } from '../../clients/typescript/src/index.js';
import { admin } from '../support/cli.js';
import { startTestService, type TestService } from '../support/http.js';

const example = (name: string) => JSON.parse(readFileSync(new URL(`../../examples/${name}`, import.meta.url), 'utf8'));

async function cli(args: string[]): Promise<Record<string, string>> {
  const r = await admin(args);
  expect(r.code, r.stderr).to.equal(0);
  return JSON.parse(r.stdout) as Record<string, string>;
}

describe('TypeScript client: the first session', function () {
  this.timeout(180_000);
  let t: TestService;

  before(async () => {
    t = await startTestService();
  });
  after(async () => t.close());

  it('creates a workspace, key and authorization, onboards a company, submits the example invoice and polls it to its final state', async () => {
    const tin = String(Math.floor(1e9 + Math.random() * 8e9));
    const { workspaceId } = await cli(['workspace', 'create', '--name', 'Acme']);
    const { apiKey } = await cli(['key', 'create', '--workspace', workspaceId!, '--environment', 'sandbox', '--permission', 'read_write', '--role', 'owner']);
    await cli(['authorization', 'create', '--workspace', workspaceId!, '--environment', 'sandbox', '--tin', tin, '--email', 'finance@acme.ae']);
    const client = createClient({ baseUrl: t.url, apiKey: apiKey! });

    const company = await client.api.POST('/v3/connect/companies', { body: { ...example('connect-company.json'), tin } });
    expect(company.response.status, JSON.stringify(company.error)).to.equal(201);

    const submission: UnifySubmission = example('ae-tax-invoice.json');
    submission.payload.header!.documentNumber = `FIRST-${process.pid}-${Date.now().toString(36)}`;
    const key = `first-session-${Date.now()}`;
    const accepted = await client.submit(submission, { idempotencyKey: key });
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(200);
    if (accepted.status !== 200) return;
    expect(accepted.replayed).to.equal(false);
    expect(accepted.body.kind).to.equal('document');
    expect(accepted.body.warnings).to.deep.equal([]);
    const again = await client.submit(submission, { idempotencyKey: key });
    expect(again).to.deep.include({ status: 200, replayed: true });
    expect(again.body.documentId).to.equal(accepted.body.documentId);

    const seen: string[] = [];
    const final = await client.waitForFinalState(accepted.body.documentId, { initialDelayMs: 100, maxDelayMs: 1000, timeoutMs: 90_000, onStatus: (s) => seen.push(s.state) });
    expect(final.isTerminal).to.equal(true);
    expect(final.state).to.equal('final_valid');
    expect(final.documentNumber).to.equal(submission.payload.header!.documentNumber);
    expect(seen.at(-1)).to.equal('final_valid');

    // A misspelt member reaches the service only through an untyped value: it is answered with a warning.
    const typo = structuredClone(submission) as UnifySubmission & { payload: { header: Record<string, unknown> } };
    typo.payload.header.documentNumber = `${submission.payload.header!.documentNumber}-2`;
    typo.payload.header.buyerReferance = 'PO-7';
    const warned = await client.submit(typo);
    expect(warned.status).to.equal(200);
    if (warned.status === 200) expect(warned.body.warnings.map((w) => w.payloadField)).to.deep.equal(['header.buyerReferance']);

    // No purchases were received: the cursor iteration ends at once.
    const purchases = [];
    for await (const p of client.purchases({ from: '2026-01-01', limit: 10 })) purchases.push(p);
    expect(purchases).to.deep.equal([]);
  });

  it('verifies a webhook signature on the raw body, and refuses a changed body or signature', () => {
    const body = JSON.stringify({ eventId: 'evt_1', data: { id: 'evt_1', type: 'isv.credits.company.threshold', timestamp: '2026-01-01T00:00:00Z', data: {} } });
    const signature = createHmac('sha256', 'whsec_test').update(body).digest('hex');
    expect(verifyWebhookSignature(body, signature, 'whsec_test')).to.equal(true);
    expect(verifyWebhookSignature(`${body} `, signature, 'whsec_test')).to.equal(false);
    expect(verifyWebhookSignature(body, signature.replace(/.$/, (c) => (c === '0' ? '1' : '0')), 'whsec_test')).to.equal(false);
    expect(verifyWebhookSignature(body, null, 'whsec_test')).to.equal(false);
    const sha512 = createHmac('sha512', 'k').update(body).digest('hex');
    expect(verifyWebhookSignature(Buffer.from(body), sha512, 'k', 'sha512')).to.equal(true);
  });
});
