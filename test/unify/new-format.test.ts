import { expect } from 'chai';
import { createHash } from 'node:crypto';
import diagnosticsChannel from 'node:diagnostics_channel';
import { unpackArtifact } from '../../platform/eventstore/artifact-encoding.js';
import { comparePositions } from '../../platform/eventstore/port.js';
import { projectionBatches, submitSteps, type ProjectionBatchTrace, type SubmitStep } from '../../platform/trace-channels.js';
import { testDb } from '../support/db.js';
import { call, type TestService } from '../support/http.js';
import { setMappingAutoAssign } from '../../commands/connect/settings.js';
import { clientFor } from '../connect/support.js';
import { freshNumber, uaeInvoice, unifyTenant, type UnifyTenant, withUnifyService } from './support.js';

describe('Unify new format and the sales document status (docs/api/unify.md)', function () {
  this.timeout(60000);
  let t: TestService;
  let u: UnifyTenant;

  withUnifyService((service, tenant) => {
    t = service;
    u = tenant;
  });

  it('accepts a valid UAE tax invoice, and a status read right after finds it submitted', async () => {
    const payload = uaeInvoice();
    const r = await u.submit(u.request(payload));
    expect(r.status, r.text).to.equal(200);
    // The four fields of the interface, plus the discriminator and the unknown-field warnings (none here).
    expect(r.json).to.have.all.keys('kind', 'documentId', 'documentNumber', 'message', 'Base64XML', 'warnings');
    expect(r.json.kind).to.equal('document');
    expect(r.json.warnings).to.deep.equal([]);
    expect(r.json.documentNumber).to.equal(payload.header.documentNumber);
    const xml = Buffer.from(r.json.Base64XML, 'base64').toString('utf8');
    expect(xml).to.contain('<cbc:CustomizationID>urn:peppol:pint:billing-1@ae-1</cbc:CustomizationID>');
    expect(xml).to.contain(`<cbc:ID>${payload.header.documentNumber}</cbc:ID>`);

    const read = await u.status(r.json.documentId);
    expect(read.status).to.equal(200);
    expect(read.json.success).to.equal(true);
    const data = read.json.data;
    expect(data).to.include({ documentId: r.json.documentId, documentNumber: payload.header.documentNumber, country: 'AE', environment: 'sandbox', state: 'submitted', isTerminal: false });
    expect(data.errors).to.deep.equal([]);
    expect(Date.parse(data.lastUpdatedAt)).to.be.a('number');
    expect(data.compliance.ftaApprovedStatus).to.equal('PENDING');
    expect(data.compliance.uuid).to.match(/^[0-9a-f-]{36}$/);
    expect(xml).to.contain(`<cbc:UUID>${data.compliance.uuid}</cbc:UUID>`);
    expect(data.compliance.businessProcessIdentifier).to.equal('urn:peppol:bis:billing');
    expect(data.compliance.specificationIdentifier).to.equal('urn:peppol:pint:billing-1@ae-1');
    expect(data.artifacts).to.deep.equal({ invoiceXmlBase64: r.json.Base64XML, invoiceXmlEncoding: 'base64' });
    expect(data.validationResults.status).to.equal('Pending');
    expect(data.validationResults.validationSteps.map((s: { name: string }) => s.name)).to.deep.equal([
      'Validation Passed',
      'Queue Admitted',
      'Delivery Processing Started',
      'Delivery Success',
    ]);
    expect(data.validationResults.validationSteps.map((s: { status: string }) => s.status)).to.deep.equal(['Valid', 'Valid', null, null]);

    const status = await u.status(r.json.documentId, 'status');
    expect(status.status).to.equal(200);
    expect(status.json.data.pdfBase64).to.equal(null);
    expect(status.json.data.state).to.equal('submitted');
  });

  it('stores the XML once, by hash: the event names it, the read model keeps the hash, the status read joins it', async () => {
    const r = await u.submit(u.request(uaeInvoice()));
    expect(r.status, r.text).to.equal(200);
    const bytes = Buffer.from(r.json.Base64XML, 'base64');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const [submitted] = await t.service.runtime.store.readStream(`document-${r.json.documentId}`);
    expect(submitted!.type).to.equal('DocumentSubmitted');
    expect(submitted!.schemaVersion).to.equal(2);
    expect(submitted!.data).to.not.have.property('xmlBase64');
    expect((submitted!.data as { xml: unknown }).xml).to.deep.equal({ sha256 });
    const knex = testDb().knex;
    const rows = await knex('es_artifacts').where({ hash: sha256 });
    expect(rows).to.have.length(1);
    // Kept compressed by the store (platform/eventstore/artifact-encoding.ts): a quarter of the bytes or less.
    expect(rows[0].encoding).to.equal('br');
    expect(rows[0].content.length).to.be.below(bytes.length / 4);
    expect(Buffer.compare(unpackArtifact(rows[0].content, rows[0].encoding), bytes)).to.equal(0);
    // …and PostgreSQL does not compress them again.
    const { rows: toast } = await knex.raw('select pg_column_compression(content) as method from es_artifacts where hash = ?', [sha256]);
    expect(toast[0].method).to.equal(null);
    const row = await knex('sales_documents').where({ document_id: r.json.documentId }).first();
    expect(row.xml_sha256).to.equal(sha256);
    expect(row).to.not.have.property('xml_base64');
    const read = await u.status(r.json.documentId);
    expect(read.json.data.artifacts.invoiceXmlBase64).to.equal(r.json.Base64XML);
  });

  it('answers 422 naming the core field, the payload field and the rule, and stores the document as rejected', async () => {
    const payload = uaeInvoice();
    delete payload.header.issueDate;
    payload.parties.buyer.address.stateOrProvince = 'XYZ';
    const r = await u.submit(u.request(payload));
    expect(r.status, r.text).to.equal(422);
    expect(r.json.documentId).to.be.a('string');
    expect(r.json.documentNumber).to.equal(payload.header.documentNumber);
    const fields = r.json.errors.map((e: { field: string }) => e.field);
    expect(fields).to.include('header.issueDate');
    expect(fields).to.include('parties.buyer.address.stateOrProvince');
    for (const e of r.json.errors) {
      expect(e.code).to.be.a('string');
      expect(e.payloadField).to.equal(e.field); // identity template
      expect(e.rule.code).to.equal(e.code);
    }
    const read = await u.status(r.json.documentId);
    expect(read.json.data.state).to.equal('rejected');
    expect(read.json.data.isTerminal).to.equal(true);
    expect(read.json.data.compliance.ftaApprovedStatus).to.equal('REJECTED');
    expect(read.json.data.errors.every((e: { source: string }) => e.source === 'validation')).to.equal(true);
    expect(read.json.data.validationResults.validationSteps[0]).to.deep.include({ name: 'Validation Failed', status: 'Invalid' });
    expect(read.json.data.artifacts).to.equal(null);
  });

  it('refuses a live document number with CORE-HEAD-010, and lets a rejected number be used again', async () => {
    const number = freshNumber();
    const first = await u.submit(u.request(uaeInvoice({ documentNumber: number })));
    expect(first.status).to.equal(200);
    const again = await u.submit(u.request(uaeInvoice({ documentNumber: number })));
    expect(again.status).to.equal(422);
    expect(again.json.errors.map((e: { code: string }) => e.code)).to.deep.equal(['CORE-HEAD-010']);
    expect(again.json.errors[0].field).to.equal('header.documentNumber');

    const rejectedNumber = freshNumber();
    const bad = uaeInvoice({ documentNumber: rejectedNumber });
    delete bad.header.currency;
    expect((await u.submit(u.request(bad))).status).to.equal(422);
    expect((await u.submit(u.request(uaeInvoice({ documentNumber: rejectedNumber })))).status).to.equal(200);
  });

  it('lets exactly one of concurrent submissions with the same number through', async () => {
    const number = freshNumber();
    const answers = await Promise.all(Array.from({ length: 8 }, () => u.submit(u.request(uaeInvoice({ documentNumber: number })))));
    expect(answers.filter((a) => a.status === 200)).to.have.length(1);
    expect(answers.filter((a) => a.status === 422 && a.json.errors[0].code === 'CORE-HEAD-010')).to.have.length(7);
  });

  describe('request errors (docs/api/http.md)', () => {
    it('answers 400 invalid_argument with the path of a malformed field', async () => {
      const r = await u.submit({ ...u.request(uaeInvoice()), documentType: { base: 'tax_invoice', modifiers: 'export' } });
      expect(r.status).to.equal(400);
      expect(r.json.code).to.equal('invalid_argument');
      expect(r.json.path).to.deep.equal(['documentType', 'modifiers']);
      const missing = await u.submit({ country: 'AE' });
      expect(missing.status).to.equal(400);
      expect(missing.json.errors.map((e: { path: string[] }) => e.path[0])).to.include.members(['environment', 'purpose', 'source', 'documentType', 'payload']);
    });
    it('answers 400 for an unsupported country, a bad purpose, simulation, an unknown modifier and a malformed source', async () => {
      const cases: [Record<string, unknown>, string[]][] = [
        [{ country: 'FR' }, ['country']],
        [{ purpose: 'MAPPING' }, ['purpose']],
        [{ environment: 'simulation' }, ['environment']],
        [{ documentType: { base: 'tax_invoice', modifiers: ['teleport'] } }, ['documentType', 'modifiers', 0]] as any,
        [{ source: 'no-version' }, ['source']],
      ];
      for (const [change, path] of cases) {
        const r = await u.submit(u.request(uaeInvoice(), change));
        expect(r.status, JSON.stringify(change)).to.equal(400);
        expect(r.json.code).to.equal('invalid_argument');
        expect(r.json.path, JSON.stringify(change)).to.deep.equal(path);
      }
    });
    it('applies a source change made through this instance to the very next submission, though the source lookup keeps recent answers', async () => {
      const tenant = await unifyTenant(t);
      const cut = tenant.source.lastIndexOf(':');
      const path = `/v3/connect/companies/${encodeURIComponent(tenant.source.slice(0, cut))}?sourceVersion=${encodeURIComponent(tenant.source.slice(cut + 1))}`;
      // Twice within a second: the second submission's lookup is answered from the first's.
      for (let i = 0; i < 2; i++) expect((await tenant.submit(tenant.request(uaeInvoice()))).status).to.equal(200);
      const off = await tenant.client.patch(path, { status: 'inactive' });
      expect(off.status, off.text).to.equal(200);
      const refused = await tenant.submit(tenant.request(uaeInvoice()));
      expect(refused.status, refused.text).to.equal(400);
      expect(refused.json.message).to.contain('inactive');
      expect(refused.json.path).to.deep.equal(['source']);
      const on = await tenant.client.patch(path, { status: 'active' });
      expect(on.status, on.text).to.equal(200);
      const again = await tenant.submit(tenant.request(uaeInvoice()));
      expect(again.status, again.text).to.equal(200);
    });
    it('answers 400 for a source that cannot be used for invoicing: archived, or without a configured mapping', async () => {
      const archived = await unifyTenant(t);
      const [name, version] = [archived.source.slice(0, archived.source.lastIndexOf(':')), archived.source.slice(archived.source.lastIndexOf(':') + 1)];
      const del = await archived.client.del(`/v3/connect/companies/${encodeURIComponent(name)}?sourceVersion=${encodeURIComponent(version)}`);
      expect(del.status, del.text).to.equal(200);
      const r = await archived.submit(archived.request(uaeInvoice()));
      expect(r.status).to.equal(400);
      expect(r.json).to.include({ code: 'invalid_argument' });
      expect(r.json.message).to.contain('inactive');
      expect(r.json.path).to.deep.equal(['source']);

      const unmapped = await t.tenant();
      const settings = await setMappingAutoAssign(t.service.runtime.store, { workspaceId: unmapped.workspaceId, enabled: false, templateId: null }, { now: new Date(), actor: 'test' });
      if (settings.position) await t.settle(settings.position);
      const client = clientFor(t, unmapped);
      const company = await client.onboard();
      expect(company.readyForInvoicing).to.equal(false);
      const body = u.request(uaeInvoice(), { source: `${company.sourceName}:${company.sourceVersion}` });
      const m = await call(`${t.url}/api/v3/unify`, { headers: { authorization: `Bearer ${unmapped.apiKey}`, 'new-api': 'true' }, body });
      expect(m.status).to.equal(400);
      expect(m.json.message).to.contain('mapping is not configured');
    });

    it('answers 404 for a source that is not in the workspace', async () => {
      const r = await u.submit(u.request(uaeInvoice(), { source: 'Nobody ERP:v9' }));
      expect(r.status).to.equal(404);
      expect(r.json.code).to.equal('not_found');
    });
    it('answers 403 permission_denied when the key environment differs, and insufficient_permission for a read-only key', async () => {
      const r = await u.submit(u.request(uaeInvoice(), { environment: 'production' }));
      expect(r.status).to.equal(403);
      expect(r.json.code).to.equal('permission_denied');
      const readOnly = await t.key(u.client.workspaceId, { permission: 'read' });
      const ro = await call(`${t.url}/api/v3/unify`, { headers: { authorization: `Bearer ${readOnly.apiKey}`, 'new-api': 'true' }, body: u.request(uaeInvoice()) });
      expect(ro.status).to.equal(403);
      expect(ro.json.code).to.equal('insufficient_permission');
    });
  });

  it('submits an invoices array item by item with a result per item', async () => {
    const bad = uaeInvoice();
    delete bad.header.dueDate;
    const r = await u.submit({ invoices: [u.request(uaeInvoice()), u.request(bad), { ...u.request(uaeInvoice()), country: 'XX' }] });
    expect(r.status).to.equal(200);
    expect(r.json.summary).to.deep.equal({ total: 3, success: 1, failed: 2 });
    expect(r.json.results.map((x: { status: number }) => x.status)).to.deep.equal([200, 422, 400]);
    expect(r.json.results[2].path).to.deep.equal(['invoices', 2, 'country']);
    expect(r.json.results[1].errors[0].field).to.equal('header.dueDate');
  });

  it('replays a retried submission with the same Idempotency-Key instead of refusing its number', async () => {
    const body = u.request(uaeInvoice());
    const headers = { 'idempotency-key': `submit-${freshNumber()}` };
    const first = await u.submit(body, headers);
    const retry = await u.submit(body, headers);
    expect(first.status).to.equal(200);
    expect(retry.status).to.equal(200);
    expect(retry.json.documentId).to.equal(first.json.documentId);
    expect(retry.headers.get('idempotent-replayed')).to.equal('true');
    expect(retry.json.Base64XML).to.be.a('string').and.not.equal('');
    expect(retry.json.Base64XML).to.equal(first.json.Base64XML);
  });

  describe('document reads', () => {
    it('answers 422 when type is missing or not sales/purchases, and 404 for an unknown or foreign document', async () => {
      const accepted = await u.submit(u.request(uaeInvoice()));
      for (const type of ['', 'receipts']) {
        const r = await u.status(accepted.json.documentId, 'read', type);
        expect(r.status).to.equal(422);
        expect(r.json).to.include({ success: false, code: 'VALIDATION_ERROR' });
      }
      const unknown = await u.status('no-such-document');
      expect(unknown.status).to.equal(404);
      expect(unknown.json).to.include({ success: false, code: 'NOT_FOUND' });
      const statusMissing = await u.status('no-such-document', 'status');
      expect(statusMissing.status).to.equal(404);
      expect(statusMissing.json.message).not.to.equal(unknown.json.message);

      const other = await t.tenant();
      const foreign = await call(`${t.url}/api/v3/documents/${accepted.json.documentId}?type=sales`, { headers: { authorization: `Bearer ${other.apiKey}` } });
      expect(foreign.status).to.equal(404);
    });
  });

  it('counts submitted sales documents in GET /v3/connect/invoices/counts', async () => {
    const counts = async () => {
      const r = await call(`${t.url}/v3/connect/invoices/counts?countryCode=AE`, { headers: { 'x-api-key': u.apiKey, 'x-environment': 'sandbox' } });
      expect(r.status, r.text).to.equal(200);
      return r.json.data;
    };
    const before = await counts();
    const accepted = await u.submit(u.request(uaeInvoice()));
    const invalid = uaeInvoice();
    delete invalid.header.issueDate;
    await u.submit(u.request(invalid));
    const after = await counts();
    expect(after.salesCount - before.salesCount).to.equal(2);
    expect(after.totalCount - before.totalCount).to.equal(2);
    const read = await u.status(accepted.json.documentId);
    expect(read.status).to.equal(200);
    const company = after.companies.find((c: { salesCount: number }) => c.salesCount > 0);
    expect(company.companyId).to.match(/^[0-9a-f]{24}$/);
  });

  it('serves the field-requirement catalogue generated from the rule sets', async () => {
    const r = await call(`${t.url}/api/v3/unify/requirements?country=AE&base=tax_invoice&modifiers=export`, { headers: { authorization: `Bearer ${u.apiKey}` } });
    expect(r.status, r.text).to.equal(200);
    expect(r.json.country).to.equal('AE');
    expect(r.json.modifiers).to.deep.equal(['export']);
    const byPath = new Map(r.json.fields.map((f: { path: string }) => [f.path, f]));
    expect(byPath.size).to.be.greaterThan(10);
    const bad = await call(`${t.url}/api/v3/unify/requirements?country=ZZ&base=tax_invoice`, { headers: { authorization: `Bearer ${u.apiKey}` } });
    expect(bad.status).to.equal(400);
    expect(bad.json.code).to.equal('invalid_argument');
  });

  // The latency steps the service publishes for a benchmark probe (platform/trace-channels.ts).
  it("a submission's append, then its read models' batches holding it, then its answer's read-your-writes, under the answer's request id", async () => {
    expect(submitSteps.hasSubscribers).to.equal(false);
    const seen: { kind: string; value: SubmitStep | ProjectionBatchTrace }[] = [];
    const onStep = (m: unknown) => seen.push({ kind: 'step', value: m as SubmitStep });
    const onBatch = (m: unknown) => seen.push({ kind: 'batch', value: m as ProjectionBatchTrace });
    diagnosticsChannel.subscribe(submitSteps.name, onStep);
    diagnosticsChannel.subscribe(projectionBatches.name, onBatch);
    try {
      const r = await u.submit(u.request(uaeInvoice()), { 'x-request-id': 'trace-test-1' });
      expect(r.status, r.text).to.equal(200);
    } finally {
      diagnosticsChannel.unsubscribe(submitSteps.name, onStep);
      diagnosticsChannel.unsubscribe(projectionBatches.name, onBatch);
    }
    const steps = seen.filter((s) => s.kind === 'step').map((s) => s.value as SubmitStep);
    expect(steps.map((s) => [s.requestId, s.step])).to.deep.equal([
      ['trace-test-1', 'appended'],
      ['trace-test-1', 'readable'],
    ]);
    const position = steps[0]!.position;
    const appendedAt = seen.findIndex((s) => s.kind === 'step');
    const readableAt = seen.findIndex((s) => s.kind === 'step' && (s.value as SubmitStep).step === 'readable');
    for (const name of ['documents', 'search']) {
      const holding = seen.findIndex(
        (s, i) => i > appendedAt && s.kind === 'batch' && (s.value as ProjectionBatchTrace).projection === name && comparePositions((s.value as ProjectionBatchTrace).position!, position) >= 0,
      );
      expect(holding, `${name} batch holding the submission`).to.be.greaterThan(appendedAt).and.lessThan(readableAt);
      const batch = seen[holding]!.value as ProjectionBatchTrace;
      expect(batch.endedAt).to.be.at.least(batch.startedAt);
      expect(batch.read).to.be.greaterThan(0);
    }
  });
});
