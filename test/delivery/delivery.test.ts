import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { execute, loadAggregate, seededEventId } from '../../commands/execute.js';
import { v5 as uuidv5 } from 'uuid';
import { documentDecider, documentStream } from '../../domain/document/document.js';
import { completeFinalResult, deliverDocument, type DeliveryDeps } from '../../commands/delivery/deliver.js';
import { DELIVER_FROM_EVENT_WITHIN_MS, deliveryReactor } from '../../projections/reactors/delivery.js';
import { artifactOf, type Artifact, type EventStore, type ReadStreamOptions, type RecordedEvent } from '../../platform/eventstore/port.js';
import { deliverySnapshotStream } from '../../domain/delivery/snapshot.js';
import type { Connector, ConnectorRegistry, DeliveryAnswer, DeliveryRequest } from '../../commands/delivery/connector.js';
import { sandboxConnectors } from '../../commands/delivery/sandbox-connectors.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { ManualClock } from '../../platform/clock.js';
import { countSandboxReceipts, recordSandboxReceipts } from '../../readmodels/sandbox-receipts.js';
import { sandboxPeppolNetwork } from '../../commands/purchases/sandbox-network.js';
import { artifactBytes } from '../../commands/submissions.js';
import { peppolIdentifiersOf } from '../../domain/peppol/identifiers.js';
import { generateInvoiceXml, type CoreDocument } from '../../domain/artifacts/index.js';
import { testDb } from '../support/db.js';
import { startTestService, type TestService } from '../support/http.js';
import { freshNumber, uaeInvoice, unifyTenant, type UnifyTenant } from '../unify/support.js';

const RETRY_BASE_MS = 10_000;

describe('delivery pipeline: every sandbox scenario through every state (docs/api/unify.md)', function () {
  this.timeout(60000);
  let t: TestService;
  let u: UnifyTenant;
  const clock = new ManualClock(new Date());

  before(async () => {
    t = await startTestService({
      clock,
      startWorkers: false,
      config: (c) => ({ ...c, delivery: { ...c.delivery, maxAttempts: 3, retryBaseMs: RETRY_BASE_MS, retryMaxMs: 60_000, sandboxFinalResultAfterMs: 0 } }),
    });
    u = await unifyTenant(t);
  });
  after(async () => t.close());

  const tick = () => t.service.processes.workers[0]!.worker.tick(clock.now());

  async function submitted(country: 'AE' | 'SA' | 'MY', documentNumber: string, options: { variant?: string; buyerPeppolId?: string } = {}) {
    const payload = country === 'AE' ? uaeInvoice({ documentNumber }) : (sampleDocument(country, { lines: 2, documentNumber }) as Record<string, any>);
    if (options.buyerPeppolId) payload.parties.buyer.peppolId = options.buyerPeppolId;
    const documentType = { base: 'tax_invoice', modifiers: [], ...(options.variant ? { variant: options.variant } : {}) };
    const r = await u.submit(u.request(payload, { country, documentType }));
    expect(r.status, r.text).to.equal(200);
    return r.json.documentId as string;
  }

  async function settled(documentId: string, until: (state: string) => boolean = (s) => !['submitted', 'processing'].includes(s), tenant = u) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await tenant.status(documentId, 'status');
      if (until(r.json.data.state) || Date.now() > deadline) return r.json.data;
      await new Promise((res) => setTimeout(res, 25));
    }
  }

  it('UAE: delivered on Peppol and final_valid, with the delivery record, the TDD, APPROVED and a PDF', async () => {
    const id = await submitted('AE', freshNumber());
    const data = await settled(id);
    expect(data.state).to.equal('final_valid');
    expect(data.isTerminal).to.equal(true);
    expect(data.government).to.include({ network: 'PEPPOL', status: 'VALID' });
    expect(data.government.senderParticipantId).to.match(/^0235:/);
    expect(data.government.receiverParticipantId).to.match(/^0235:/);
    expect(data.government.messageId).to.be.a('string');
    expect(data.compliance.ftaApprovedStatus).to.equal('APPROVED');
    const tddXml = Buffer.from(data.artifacts.tddXmlBase64, 'base64').toString();
    expect(tddXml).to.contain('urn:peppol:taxdata:ae-1');
    // The TDD embeds the invoice as it was transmitted (the envelope's root declares cac and cbc).
    const sent = Buffer.from(data.artifacts.invoiceXmlBase64, 'base64').toString().replace(/^<\?xml[^>]*\?>/, '').replace(/ xmlns:cac="[^"]+" xmlns:cbc="[^"]+"/, '');
    expect(tddXml).to.contain(`<cec:ExtensionContent>${sent}</cec:ExtensionContent>`);
    expect(data.validationResults.status).to.equal('Valid');
    expect(data.validationResults.validationSteps.map((s: { name: string; status: string }) => [s.name, s.status])).to.deep.equal([
      ['Validation Passed', 'Valid'],
      ['Queue Admitted', 'Valid'],
      ['Delivery Processing Started', 'Valid'],
      ['Final Valid', 'Valid'],
    ]);
    expect(Buffer.from(data.pdfBase64, 'base64').subarray(0, 4).toString()).to.equal('%PDF');
    expect((await u.status(id, 'status')).json.data.pdfBase64).to.equal(data.pdfBase64);
    const read = await u.status(id);
    expect(read.json.data).not.to.have.property('pdfBase64');
  });

  it('Saudi Arabia: standard CLEARED, simplified REPORTED, each with the seller hash chain in its XML', async () => {
    const standard = await settled(await submitted('SA', freshNumber('SA')));
    expect(standard.state).to.equal('final_valid');
    expect(standard.government).to.include({ authority: 'ZATCA', result: 'CLEARED', status: 'VALID' });
    expect(standard).not.to.have.property('compliance');
    const simplified = await settled(await submitted('SA', freshNumber('SA'), { variant: 'simplified' }));
    expect(simplified.government.result).to.equal('REPORTED');
    const first = Buffer.from(standard.artifacts.invoiceXmlBase64, 'base64').toString();
    const second = Buffer.from(simplified.artifacts.invoiceXmlBase64, 'base64').toString();
    const pih = (xml: string) => /<cbc:ID>PIH<\/cbc:ID>[\s\S]*?<cbc:EmbeddedDocumentBinaryObject[^>]*>([^<]+)</.exec(xml)?.[1];
    expect(pih(second)).to.equal(standard.government.invoiceHash);
    // The issue time is the submission time (the XML is written on delivery, from the submitted
    // event), not midnight; the test clock does not move between submission and delivery.
    expect(/<cbc:IssueTime>([^<]+)</.exec(first)?.[1]).to.equal(clock.now().toISOString().slice(11, 19));
    expect(simplified.government.invoiceHash).to.be.a('string').and.not.equal(standard.government.invoiceHash);
  });

  it('Saudi Arabia: a rejection ends final_invalid with the authority reason, source government', async () => {
    const data = await settled(await submitted('SA', freshNumber('SBX-REJECT')));
    expect(data.state).to.equal('final_invalid');
    expect(data.government.result).to.equal('REJECTED');
    expect(data.errors[0]).to.include({ code: 'BR-KSA-37', source: 'government' });
    expect(data.validationResults.validationSteps[3]).to.deep.include({ name: 'Final Invalid', status: 'Invalid' });
  });

  it('Saudi Arabia: REPORTED_SUCCESSFULLY_EARLIER is a success', async () => {
    const data = await settled(await submitted('SA', freshNumber('SBX-REPORTED-EARLIER')));
    expect(data.state).to.equal('final_valid');
    expect(data.government.result).to.equal('REPORTED_SUCCESSFULLY_EARLIER');
  });

  it('Malaysia: MyInvois Valid, and Invalid for a rejected document; the earlier format lists it with its issue date', async () => {
    const number = freshNumber('MY');
    const validId = await submitted('MY', number);
    const valid = await settled(validId);
    expect(valid.state).to.equal('final_valid');
    expect(valid.government).to.include({ authority: 'MyInvois', result: 'Valid', status: 'VALID' });
    const listed = await u.legacy({ action: 'list', env: 'sandbox', filters: { country: 'MY', uuid: valid.government.uuid, documentId: validId } });
    expect(listed.status, listed.text).to.equal(200);
    const issueDate = (sampleDocument('MY', { lines: 2, documentNumber: number }) as { header: { issueDate: string } }).header.issueDate;
    expect(listed.json.data.results.map((r: { documentId: string; documentDetails: Record<string, unknown> }) => [r.documentId, r.documentDetails.issueDate, r.documentDetails.state])).to.deep.equal([
      [validId, issueDate, 'final_valid'],
    ]);
    const invalid = await settled(await submitted('MY', freshNumber('SBX-REJECT')));
    expect(invalid.state).to.equal('final_invalid');
    expect(invalid.government.result).to.equal('Invalid');
  });

  it('Peppol: an unknown receiving participant and a buyer rejection both end final_invalid', async () => {
    const unknown = await settled(await submitted('AE', freshNumber(), { buyerPeppolId: '0000000000' }));
    expect(unknown.state).to.equal('final_invalid');
    expect(unknown.errors[0]).to.include({ code: 'PEPPOL_PARTICIPANT_NOT_FOUND', source: 'delivery' });
    const rejected = await settled(await submitted('AE', freshNumber('SBX-BUYER-REJECT')));
    expect(rejected.state).to.equal('final_invalid');
    expect(rejected.errors[0]).to.include({ code: 'BUYER_REJECTED', source: 'government' });
    expect(rejected.government.status).to.equal('INVALID');
    expect(rejected.compliance.ftaApprovedStatus).to.equal('REJECTED');
  });

  it('retries a transient failure after the back-off on the injected clock, then succeeds', async () => {
    const id = await submitted('AE', freshNumber('SBX-TRANSIENT'));
    const failed = await settled(id);
    expect(failed.state).to.equal('delivery_failed');
    expect(failed.isTerminal).to.equal(false);
    expect(failed.errors[0]).to.include({ code: 'DESTINATION_UNAVAILABLE', source: 'delivery' });
    expect(failed.validationResults.validationSteps[3]).to.deep.include({ name: 'Delivery Failed', status: 'Invalid' });
    await tick();
    expect((await u.status(id, 'status')).json.data.state).to.equal('delivery_failed'); // not due yet
    clock.advance(RETRY_BASE_MS);
    await tick();
    expect((await settled(id, (s) => s === 'final_valid')).state).to.equal('final_valid');
  });

  it('gives up after the last attempt: final_invalid, with DELIVERY_OUTCOME_UNKNOWN when the outcome is unknown', async () => {
    const exhausted = await submitted('AE', freshNumber('SBX-UNAVAILABLE'));
    const unknown = await submitted('AE', freshNumber('SBX-TIMEOUT'));
    for (let i = 0; i < 4; i++) {
      await settled(exhausted);
      await settled(unknown);
      clock.advance(60_000);
      await tick();
    }
    const a = await settled(exhausted, (s) => s === 'final_invalid');
    expect(a.state).to.equal('final_invalid');
    expect(a.errors[0]).to.include({ code: 'DELIVERY_ATTEMPTS_EXHAUSTED', source: 'delivery' });
    const b = await settled(unknown, (s) => s === 'final_invalid');
    expect(b.errors[0]).to.include({ code: 'DELIVERY_OUTCOME_UNKNOWN', source: 'delivery' });
  });

  it('a retry the service stopped between sending and recording (left processing) is sent again by the worker after DELIVERY_RESUME_AFTER_MS, under the same attempt', async () => {
    const id = await submitted('AE', freshNumber('SBX-TRANSIENT'));
    expect((await settled(id)).state).to.equal('delivery_failed');
    const [first] = await t.service.runtime.store.readStream(documentStream(id), { maxCount: 1 });
    const uuid = (first!.data as { uuid: string }).uuid;
    // The worker's retry: its start appended, the destination receives the document, then the process dies.
    clock.advance(RETRY_BASE_MS);
    const sandbox = sandboxConnectors(t.service.runtime.db.knex, clock, { latencyMs: 0, finalResultAfterMs: 0 });
    const dying = deliveringThrough(sandbox, async (c, request) => {
      await c.deliver(request);
      throw new Error('killed after the destination received the document');
    });
    const deps: DeliveryDeps = { store: t.service.runtime.store, clock, connectors: dying, policy: { maxAttempts: 3, retryBaseMs: RETRY_BASE_MS, retryMaxMs: 60_000, startGraceMs: 200 } };
    const crashed = await deliverDocument(deps, id).catch((e: Error) => e);
    expect(String(crashed)).to.contain('killed');
    expect((await settled(id, (s) => s === 'processing')).state).to.equal('processing');
    const receipts = await countSandboxReceipts(t.service.runtime.db.knex, uuid);
    // Not before the attempt may still be running elsewhere.
    clock.advance(t.service.runtime.config.delivery.resumeAfterMs - 1000);
    await tick();
    expect((await u.status(id, 'status')).json.data.state).to.equal('processing');
    clock.advance(1000);
    await tick();
    expect((await settled(id, (s) => s === 'final_valid')).state).to.equal('final_valid');
    const events = await t.service.runtime.store.readStream(documentStream(id));
    expect(events.filter((e) => e.type === 'DocumentDeliveryStarted').map((e) => (e.data as { attempt: number }).attempt)).to.deep.equal([1, 2]);
    expect(await countSandboxReceipts(t.service.runtime.db.knex, uuid)).to.equal(receipts);
  });

  it('refuses the number of a final_invalid document with CORE-HEAD-010', async () => {
    const number = freshNumber('SBX-BUYER-REJECT');
    expect((await settled(await submitted('AE', number))).state).to.equal('final_invalid');
    const again = await u.submit(u.request(uaeInvoice({ documentNumber: number })));
    expect(again.status).to.equal(422);
    expect(again.json.errors[0].code).to.equal('CORE-HEAD-010');
  });

  it('leaves a production document without a connector in delivery_failed, named by /readyz', async () => {
    const prod = await unifyTenant(t, { environment: 'production' });
    const r = await prod.submit(prod.request(uaeInvoice({ documentNumber: freshNumber() })));
    expect(r.status, r.text).to.equal(200);
    const waiting = await settled(r.json.documentId, undefined, prod);
    expect(waiting.state).to.equal('delivery_failed');
    expect(waiting.isTerminal).to.equal(false);
    expect(waiting.errors[0]).to.include({ code: 'DESTINATION_NOT_CONFIGURED', source: 'delivery' });
    const ready = (await (await fetch(`${t.url}/readyz`)).json()) as { checks: { connectors: { missing: unknown[] } } };
    expect(ready.checks.connectors.missing).to.deep.include({ environment: 'production', destination: 'PEPPOL' });
  });
});

/** The connectors of `real`, each delivery going through `deliver` (which may call the real connector's). */
function deliveringThrough(real: ConnectorRegistry, deliver: (connector: Connector, request: DeliveryRequest) => Promise<DeliveryAnswer>): ConnectorRegistry {
  return {
    missing: () => [],
    connectorFor: (env, destination) => {
      const c = real.connectorFor(env, destination)!;
      return { name: c.name, destination: c.destination, deliver: (request) => deliver(c, request), finalResult: (r, g) => c.finalResult(r, g) };
    },
  };
}

/** Appends a submitted UAE sandbox invoice straight to the log (no service), with its XML artifact when given. */
async function appendSubmittedDocument(
  store: EventStore,
  clock: ManualClock,
  options: { prefix: string; workspaceId: string; xml: Artifact | null | 'generated' },
): Promise<{ documentId: string; uuid: string; event: RecordedEvent }> {
  const documentId = randomUUID();
  const uuid = randomUUID();
  const coreDocument = uaeInvoice({ documentNumber: freshNumber(options.prefix) });
  // 'generated': the document's own PINT AE XML, which the sandbox Peppol network routes by its parties.
  const xml =
    options.xml === 'generated'
      ? artifactOf(Buffer.from(generateInvoiceXml({ country: 'AE', documentType: { base: 'tax_invoice', modifiers: [] }, document: coreDocument as CoreDocument, uuid }).xml))
      : options.xml;
  await execute(
    store,
    documentDecider,
    documentStream(documentId),
    {
      type: 'Receive',
      event: {
        type: 'DocumentSubmitted',
        data: {
          documentId, uuid, documentNumber: coreDocument.header.documentNumber, country: 'AE', environment: 'sandbox',
          documentType: { base: 'tax_invoice', modifiers: [] }, source: { name: 'erp', version: '1', companyId: null },
          format: 'new', externalId: null, destinations: ['TAX_AUTHORITY'], coreDocument, validation: {}, xml: xml ? { sha256: xml.sha256 } : null,
        },
      },
    },
    { now: clock.now(), workspaceId: options.workspaceId, actor: 'test' },
    { artifacts: xml ? [xml] : [] },
  );
  const [event] = await store.readStream(documentStream(documentId), { maxCount: 1 });
  return { documentId, uuid, event: event! };
}

describe('delivery after a crash (no service running: the delivery steps are driven by hand)', function () {
  this.timeout(30000);
  const clock = new ManualClock(new Date());
  let store: PostgresEventStore;
  before(async () => {
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 5 });
  });
  after(async () => store.close());

  const submittedDocument = () => appendSubmittedDocument(store, clock, { prefix: 'CRASH', workspaceId: 'ws_crash_test', xml: null });

  const sandbox = () => sandboxConnectors(testDb().knex, clock, { latencyMs: 0, finalResultAfterMs: 0 });
  const deps = (connectors: ConnectorRegistry): DeliveryDeps => ({ store, clock, connectors, policy: { maxAttempts: 3, retryBaseMs: RETRY_BASE_MS, retryMaxMs: 60_000, startGraceMs: 200 } });
  /** A connector whose process dies right after the destination received the document. */
  function dying(): ConnectorRegistry {
    return deliveringThrough(sandbox(), async (c, request) => {
      await c.deliver(request);
      throw new Error('killed after the destination received the document');
    });
  }

  it('resumes the same attempt: the destination registers the document once and it ends once', async () => {
    const { documentId, uuid } = await submittedDocument();
    let crashed: unknown = null;
    await deliverDocument(deps(dying()), documentId).catch((e) => (crashed = e));
    expect(String(crashed)).to.contain('killed');
    expect(await countSandboxReceipts(testDb().knex, uuid)).to.equal(1);

    expect(await deliverDocument(deps(sandbox()), documentId)).to.equal('final');
    expect(await deliverDocument(deps(sandbox()), documentId)).to.equal('skipped');
    const types = (await store.readStream(documentStream(documentId))).map((e) => e.type);
    expect(types).to.deep.equal(['DocumentSubmitted', 'DocumentDeliveryStarted', 'DocumentDelivered', 'DocumentFinalized']);
    expect(await countSandboxReceipts(testDb().knex, uuid)).to.equal(1);
  });

  it('starts one attempt when two runners deliver the same document at once', async () => {
    const { documentId, uuid } = await submittedDocument();
    const outcomes = await Promise.all([deliverDocument(deps(sandbox()), documentId), deliverDocument(deps(sandbox()), documentId)]);
    expect(outcomes).to.include('final');
    const types = (await store.readStream(documentStream(documentId))).map((e) => e.type);
    expect(types.filter((x) => x === 'DocumentDeliveryStarted')).to.have.length(1);
    expect(types.filter((x) => x === 'DocumentFinalized')).to.have.length(1);
    expect(await countSandboxReceipts(testDb().knex, uuid)).to.equal(1);
  });
});

describe('delivery without reading the document stream (the reactor event, the delivery snapshot)', function () {
  this.timeout(30000);
  const clock = new ManualClock(new Date());
  let store: PostgresEventStore;
  before(async () => {
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 5 });
  });
  after(async () => store.close());

  /** The real store, with every readStream call noted (stream and options), and the number of appends. */
  function counted(): { store: EventStore; reads: { streamId: string; options: ReadStreamOptions | undefined }[]; appends: { n: number } } {
    const reads: { streamId: string; options: ReadStreamOptions | undefined }[] = [];
    const appends = { n: 0 };
    const wrapped = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'readStream') {
          return (streamId: string, options?: ReadStreamOptions) => {
            reads.push({ streamId, options });
            return target.readStream(streamId, options);
          };
        }
        const value = Reflect.get(target, prop, receiver);
        if (prop === 'append' || prop === 'appendMulti') {
          return (...args: unknown[]) => {
            appends.n++;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as EventStore;
    return { store: wrapped, reads, appends };
  }

  const submittedDocument = () =>
    appendSubmittedDocument(store, clock, { prefix: 'SNAP', workspaceId: 'ws_snapshot_test', xml: artifactOf(Buffer.from('<Invoice/>')) });

  const sandbox = (finalResultAfterMs = 0) => sandboxConnectors(testDb().knex, clock, { latencyMs: 0, finalResultAfterMs });
  const deps = (s: EventStore, connectors: ConnectorRegistry): DeliveryDeps => ({ store: s, clock, connectors, policy: { maxAttempts: 3, retryBaseMs: RETRY_BASE_MS, retryMaxMs: 60_000, startGraceMs: 200 } });
  /** Fails the first delivery (transient, nothing received), then the real sandbox. */
  function failingOnce(): ConnectorRegistry {
    let failed = false;
    return deliveringThrough(sandbox(), async (c, request) => {
      if (failed) return c.deliver(request);
      failed = true;
      return { kind: 'failed', outcomeUnknown: false, error: { code: 'DELIVERY_UNAVAILABLE', message: 'try later', path: [], source: 'delivery' } };
    });
  }
  const types = async (documentId: string) => (await store.readStream(documentStream(documentId))).map((e) => e.type);
  const documentReads = (reads: { streamId: string; options: ReadStreamOptions | undefined }[], documentId: string) => reads.filter((r) => r.streamId === documentStream(documentId));

  it('the reactor delivers from the DocumentSubmitted event it holds: no read of the document stream', async () => {
    const { documentId, uuid, event } = await submittedDocument();
    const c = counted();
    expect(await deliverDocument(deps(c.store, sandbox()), documentId, event)).to.equal('final');
    expect(documentReads(c.reads, documentId)).to.deep.equal([]);
    expect(await types(documentId)).to.deep.equal(['DocumentSubmitted', 'DocumentDeliveryStarted', 'DocumentDelivered', 'DocumentFinalized']);
    // The destination answered within the grace: the start went with the answer, in one append.
    expect(c.appends.n).to.equal(1);
    expect(new Set((await store.readStream(documentStream(documentId), { fromRevision: 1n })).map((e) => e.position.commit)).size).to.equal(1);
    expect(await countSandboxReceipts(testDb().knex, uuid)).to.equal(1);
    // The same event again from its view (two reactions at once): the destination answers a document it
    // has, and the append is recognised as a replay by its event ids: nothing is written.
    expect(await deliverDocument(deps(store, sandbox()), documentId, event)).to.equal('skipped');
    expect(await types(documentId)).to.have.length(4);
  });

  it('the deliveries of one reactor batch: their receivers are looked up, and their receipts recorded, with one statement each', async () => {
    const documents = await Promise.all(
      Array.from({ length: 6 }, () => appendSubmittedDocument(store, clock, { prefix: 'BATCH', workspaceId: 'ws_snapshot_test', xml: 'generated' })),
    );
    const network = sandboxPeppolNetwork({ store, knex: testDb().knex, clock, maxXmlBytes: 10_000_000 });
    const connectors = sandboxConnectors(testDb().knex, clock, { latencyMs: 0, finalResultAfterMs: 0 }, network);
    const statements: string[] = [];
    const noted = (q: { sql: string }) => statements.push(q.sql);
    testDb().knex.on('query', noted);
    let outcomes: string[];
    try {
      // As the reactor's lanes run a batch: every delivery at once, each from its event.
      outcomes = await Promise.all(documents.map((d) => deliverDocument(deps(store, connectors), d.documentId, d.event)));
    } finally {
      testDb().knex.off('query', noted);
    }
    expect(outcomes).to.deep.equal(documents.map(() => 'final'));
    expect(statements.filter((sql) => /with ordinality as k\(participant_id/.test(sql))).to.have.length(1);
    expect(statements.filter((sql) => /insert into sandbox_receipts/.test(sql))).to.have.length(1);
    for (const d of documents) {
      expect(await countSandboxReceipts(testDb().knex, d.uuid)).to.equal(1);
      expect(await types(d.documentId)).to.deep.equal(['DocumentSubmitted', 'DocumentDeliveryStarted', 'DocumentDelivered', 'DocumentFinalized']);
      const [finalized] = await store.readStream(documentStream(d.documentId), { backwards: true, maxCount: 1 });
      const government = (finalized!.data as { government: Record<string, unknown> }).government;
      expect(government).to.include({ status: 'VALID', receiverRegistered: false });
      // The document type and process the route's one read of the header named: those of the document's own identifiers.
      const ids = peppolIdentifiersOf((await artifactBytes(store, (d.event.data as { xml: Parameters<typeof artifactBytes>[1] }).xml))!);
      expect(government).to.include({ documentTypeId: ids.documentTypeId, processId: ids.processId });
    }
  });

  it('receipts recorded together: a UUID given twice is received once, one received before keeps its earlier answer', async () => {
    const [earlier, fresh] = [randomUUID(), randomUUID()];
    const at = new Date('2026-03-01T10:00:00Z');
    const receipt = (uuid: string, answer: Record<string, unknown>) => ({ uuid, destination: 'PEPPOL', environment: 'sandbox', answer, receivedAt: at });
    await recordSandboxReceipts(testDb().knex, [receipt(earlier, { n: 1 })]);
    const recorded = await recordSandboxReceipts(testDb().knex, [receipt(fresh, { n: 2 }), receipt(earlier, { n: 3 }), receipt(fresh, { n: 4 })]);
    expect(recorded.map((r) => [r.receipt.uuid, r.firstTime, r.receipt.answer])).to.deep.equal([
      [fresh, true, { n: 2 }],
      [earlier, false, { n: 1 }],
      [fresh, false, { n: 2 }],
    ]);
    expect(recorded[0]!.receipt.receivedAt.toISOString()).to.equal(at.toISOString());
    expect(await countSandboxReceipts(testDb().knex, fresh)).to.equal(1);
  });

  /** The sandbox, with each delivery held until `release()`; `received` resolves when the first call arrives. */
  function held(): { connectors: ConnectorRegistry; received: Promise<void>; release: () => void } {
    let arrived!: () => void;
    let release!: () => void;
    const received = new Promise<void>((r) => (arrived = r));
    const released = new Promise<void>((r) => (release = r));
    const connectors = deliveringThrough(sandbox(), async (c, request) => {
      arrived();
      await released;
      return c.deliver(request);
    });
    return { connectors, received, release };
  }
  const graced = (s: EventStore, connectors: ConnectorRegistry, startGraceMs: number): DeliveryDeps => ({ ...deps(s, connectors), policy: { ...deps(s, connectors).policy, startGraceMs } });
  const until = async (check: () => Promise<boolean>) => {
    for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
  };

  it('a destination slower than the grace: the start is appended on its own meanwhile (processing), the answer after it', async () => {
    const { documentId, uuid, event } = await submittedDocument();
    const slow = held();
    const c = counted();
    const delivering = deliverDocument(graced(c.store, slow.connectors, 20), documentId, event);
    await slow.received;
    await until(async () => (await types(documentId)).length > 1);
    expect(await types(documentId)).to.deep.equal(['DocumentSubmitted', 'DocumentDeliveryStarted']);
    expect((await loadAggregate(store, documentDecider, documentStream(documentId))).state.state).to.equal('processing');
    slow.release();
    expect(await delivering).to.equal('final');
    expect(c.appends.n).to.equal(2);
    expect(documentReads(c.reads, documentId)).to.deep.equal([]);
    expect(await types(documentId)).to.deep.equal(['DocumentSubmitted', 'DocumentDeliveryStarted', 'DocumentDelivered', 'DocumentFinalized']);
    expect(await countSandboxReceipts(testDb().knex, uuid)).to.equal(1);
  });

  it('the start appended alone, then a crash: the same event again finds part of its append stored, and the stream resumes the attempt', async () => {
    const { documentId, uuid, event } = await submittedDocument();
    const slow = held();
    // The first run appends its start after the grace, then never hears from the destination (a crash).
    const first = deliverDocument(graced(store, slow.connectors, 20), documentId, event);
    await slow.received;
    await until(async () => (await types(documentId)).length > 1);
    expect(await types(documentId)).to.deep.equal(['DocumentSubmitted', 'DocumentDeliveryStarted']);
    const c = counted();
    expect(await deliverDocument(deps(c.store, sandbox()), documentId, event)).to.equal('final');
    // Its [start, answer] append was refused (the start is stored); the stream said processing: attempt 1 again.
    expect(documentReads(c.reads, documentId)).to.have.length(1);
    const stream = await store.readStream(documentStream(documentId));
    expect(stream.map((e) => e.type)).to.deep.equal(['DocumentSubmitted', 'DocumentDeliveryStarted', 'DocumentDelivered', 'DocumentFinalized']);
    expect(stream.filter((e) => e.type !== 'DocumentSubmitted').map((e) => (e.data as { attempt?: number }).attempt)).to.deep.equal([1, 1, undefined]);
    expect(await countSandboxReceipts(testDb().knex, uuid)).to.equal(1);
    // The first run's late answer: its append is refused, the stream says final, nothing more is written.
    slow.release();
    expect(await first).to.equal('skipped');
    expect(await types(documentId)).to.have.length(4);
  });

  /** The sandbox, counting the deliveries it is handed. */
  function countingSends(): { connectors: ConnectorRegistry; sent: { n: number } } {
    const sent = { n: 0 };
    const connectors = deliveringThrough(sandbox(), (c, request) => {
      sent.n++;
      return c.deliver(request);
    });
    return { connectors, sent };
  }

  it('a reaction the runner may have run before (an old event, a catch-up) decides from the stream: one read, nothing sent, no append', async () => {
    const { documentId, event } = await submittedDocument();
    expect(await deliverDocument(deps(store, sandbox()), documentId, event)).to.equal('final');
    const before = await types(documentId);
    // An old event (a restart's replay), and a recent one in a batch the runner may have run before.
    const old: RecordedEvent = { ...event, recordedAt: new Date(Date.now() - 10 * DELIVER_FROM_EVENT_WITHIN_MS) };
    for (const [replayed, replaying] of [[old, false], [{ ...event, recordedAt: new Date() }, true]] as const) {
      const c = counted();
      const s = countingSends();
      await deliveryReactor(deps(c.store, s.connectors), 1).react(replayed, { replaying });
      expect(c.appends.n).to.equal(0);
      expect(s.sent.n).to.equal(0);
      expect(documentReads(c.reads, documentId)).to.have.length(1);
      expect(await types(documentId)).to.deep.equal(before);
    }
    // The same event on the live tail: the reactor works from the event's view; the destination
    // answers a document it has, and the append is recognised as a replay: nothing is written.
    const fresh = counted();
    const live = countingSends();
    await deliveryReactor(deps(fresh.store, live.connectors), 1).react({ ...event, recordedAt: new Date() }, { replaying: false });
    expect(fresh.appends.n).to.equal(1);
    expect(live.sent.n).to.equal(1);
    expect(documentReads(fresh.reads, documentId)).to.deep.equal([]);
    expect(await types(documentId)).to.deep.equal(before);
  });

  it('two reactions to the same event at once start one attempt and end once', async () => {
    const { documentId, uuid, event } = await submittedDocument();
    const outcomes = await Promise.all([deliverDocument(deps(store, sandbox()), documentId, event), deliverDocument(deps(store, sandbox()), documentId, event)]);
    expect(outcomes).to.include('final');
    const all = await types(documentId);
    expect(all.filter((x) => x === 'DocumentDeliveryStarted')).to.have.length(1);
    expect(all.filter((x) => x === 'DocumentFinalized')).to.have.length(1);
    expect(await countSandboxReceipts(testDb().knex, uuid)).to.equal(1);
  });

  it('a retry works from the delivery snapshot and the first event alone (for the XML), never the whole stream', async () => {
    const { documentId, event } = await submittedDocument();
    const connectors = failingOnce();
    expect(await deliverDocument(deps(store, connectors), documentId, event)).to.equal('retry_scheduled');
    const [snapshot] = await store.readStream(deliverySnapshotStream(documentId), { backwards: true, maxCount: 1 });
    expect(snapshot!.type).to.equal('DocumentDeliverySnapshot');
    expect(snapshot!.data).to.deep.include({ documentRevision: '2', lastFailure: { retryable: true, nextAttemptAt: new Date(clock.now().getTime() + RETRY_BASE_MS).toISOString() } });
    // Not due yet: nothing is read of the document.
    const early = counted();
    expect(await deliverDocument(deps(early.store, connectors), documentId)).to.equal('skipped');
    expect(documentReads(early.reads, documentId)).to.deep.equal([]);
    clock.advance(RETRY_BASE_MS);
    const c = counted();
    expect(await deliverDocument(deps(c.store, connectors), documentId)).to.equal('final');
    expect(documentReads(c.reads, documentId).map((r) => r.options)).to.deep.equal([{ maxCount: 1 }]);
    expect(await types(documentId)).to.deep.equal([
      'DocumentSubmitted', 'DocumentDeliveryStarted', 'DocumentDeliveryFailed', 'DocumentDeliveryStarted', 'DocumentDelivered', 'DocumentFinalized',
    ]);
  });

  it('a final result collected later works from the snapshot alone; asked again, the replayed step writes nothing twice', async () => {
    const { documentId, event } = await submittedDocument();
    const connectors = sandbox(5_000);
    expect(await deliverDocument(deps(store, connectors), documentId, event)).to.equal('delivered');
    expect(await completeFinalResult(deps(store, connectors), documentId)).to.equal('skipped'); // not due yet
    clock.advance(5_000);
    const c = counted();
    expect(await completeFinalResult(deps(c.store, connectors), documentId)).to.equal('final');
    expect(documentReads(c.reads, documentId)).to.deep.equal([]);
    // Once more (the snapshot still says revision 2; the stream is at 3): the same step's events are
    // recognised as a replay by their ids, and nothing is written twice.
    await completeFinalResult(deps(store, connectors), documentId);
    expect(await types(documentId)).to.deep.equal(['DocumentSubmitted', 'DocumentDeliveryStarted', 'DocumentDelivered', 'DocumentFinalized']);
    expect(await deliverDocument(deps(store, connectors), documentId)).to.equal('skipped');
  });

  it('a snapshot the stream has moved past (another runner started the retry): nothing is sent from it; the stream decides', async () => {
    const { documentId, uuid, event } = await submittedDocument();
    const connectors = failingOnce();
    expect(await deliverDocument(deps(store, connectors), documentId, event)).to.equal('retry_scheduled');
    clock.advance(RETRY_BASE_MS);
    // Another runner starts attempt 2 (its own event ids) and is not heard of again.
    await execute(store, documentDecider, documentStream(documentId), { type: 'StartDelivery', destination: 'PEPPOL' }, { now: clock.now(), workspaceId: 'ws_snapshot_test', actor: 'test' });
    const c = counted();
    expect(await deliverDocument(deps(c.store, connectors), documentId)).to.equal('final');
    // The snapshot, then the stream (its start at revision 2 was refused), then nothing else.
    expect(documentReads(c.reads, documentId).map((r) => r.options)).to.deep.equal([undefined]);
    const all = await types(documentId);
    expect(all).to.deep.equal(['DocumentSubmitted', 'DocumentDeliveryStarted', 'DocumentDeliveryFailed', 'DocumentDeliveryStarted', 'DocumentDelivered', 'DocumentFinalized']);
    expect(await countSandboxReceipts(testDb().knex, uuid)).to.equal(1);
  });
});

describe('the ids of the delivery steps\' events (seededEventId)', () => {
  it('are the name-based UUIDs they always were: a crash\'s replay finds the events it stored before', () => {
    // The namespace and the formula the ids of stored events were made with.
    const namespace = '6f1c8e4e-3b7a-5d2e-9c41-2b8f0a7d5e13';
    for (const [seed, index] of [['doc_01JXABCDEF:1:start-next', 0], ['doc_01JXABCDEF:1:result', 1], ['ws/Ünïcödé/شركة', 'snapshot']] as const) {
      expect(seededEventId(seed, index)).to.equal(uuidv5(`${seed}/${index}`, namespace));
    }
    expect(seededEventId('doc_1:0:start-next', 0)).to.equal('d62b4c7c-b75f-5308-b620-66279ff801f5');
  });
});
