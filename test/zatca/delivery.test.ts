/**
 * Stamped Saudi delivery against the real PostgreSQL event store and the sandbox simulator: a
 * seller whose EGS unit holds a production CSID has each invoice stamped with the unit's key and
 * chained per EGS unit; the simulator checks the stamp and refuses a bad one; two delivery
 * workers on one unit keep the chain gap-free and unforked; a seller without a unit keeps the
 * unstamped chain per seller.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { deliverDocument, type DeliveryDeps } from '../../commands/delivery/deliver.js';
import { sandboxConnectors } from '../../commands/delivery/sandbox-connectors.js';
import { execute } from '../../commands/execute.js';
import { secretBox } from '../../commands/webhooks/secrets.js';
import {
  createEgsCsr,
  generateEgsKey,
  recordComplianceChecksPassed,
  recordComplianceCsid,
  recordProductionCsid,
  registerEgsUnit,
  type EgsUnitDeps,
} from '../../commands/zatca/egs-units.js';
import { ZATCA_INITIAL_PREVIOUS_INVOICE_HASH, type CoreDocument } from '../../domain/artifacts/index.js';
import { ZatcaInvoiceChained, zatcaSellerChainStream, zatcaUnitChainStream, type ZatcaLink } from '../../domain/delivery/zatca-chain.js';
import { documentDecider, documentStream } from '../../domain/document/document.js';
import { decodeEventData } from '../../domain/events/envelope.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { decodeQrTags, stampInvoice, verifyStamp } from '../../domain/zatca/stamp.js';
import { ManualClock } from '../../platform/clock.js';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import type { ConnectorRegistry, DeliveryRequest } from '../../commands/delivery/connector.js';
import { generateKeyPairSync } from 'node:crypto';
import { testDb } from '../support/db.js';
import { binarySecurityToken, openTestCa, type TestCa } from './test-ca.js';

const SELLER_VAT = '300000000000003'; // the seller of the Saudi sample document

describe('ZATCA: stamped delivery, chained per EGS unit (real PostgreSQL, sandbox simulator)', function () {
  this.timeout(60000);
  // An hour ahead: the test CA's certificates are valid from their issue, and a CSID never signs before its notBefore.
  const clock = new ManualClock(new Date(Date.now() + 3_600_000));
  let store: PostgresEventStore;
  let ca: TestCa;
  const secrets = secretBox(Buffer.alloc(32, 3));
  const egs = (): EgsUnitDeps => ({ store, secrets });
  const ctx = () => ({ now: clock.now(), actor: 'test' });
  const sandbox = () => sandboxConnectors(testDb().knex, clock, { latencyMs: 0, finalResultAfterMs: 0 });
  const deps = (s: PostgresEventStore = store): DeliveryDeps => ({ store: s, clock, connectors: sandbox(), policy: { maxAttempts: 3, retryBaseMs: 10_000, retryMaxMs: 60_000, startGraceMs: 200 }, zatca: { secrets } });

  before(async () => {
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 10 });
    ca = openTestCa();
  });
  after(async () => {
    ca.close();
    await store.close();
  });

  async function onboardedUnit(workspaceId: string): Promise<string> {
    const egsUnitId = randomUUID();
    await registerEgsUnit(egs(), {
      egsUnitId,
      workspaceId,
      environment: 'sandbox',
      sellerVat: SELLER_VAT,
      subject: { commonName: 'TST-1', serialNumber: `1-Ledger|2-1.0|3-${egsUnitId}`, organizationUnit: 'Riyadh', organizationName: 'Najd Supplies Co.', country: 'SA', invoiceType: '1100', location: 'Riyadh', industry: 'Retail' },
    }, ctx());
    const { keyId } = await generateEgsKey(egs(), egsUnitId, ctx());
    const { csrPem } = await createEgsCsr(egs(), egsUnitId, ctx());
    await recordComplianceCsid(egs(), egsUnitId, { keyId, binarySecurityToken: binarySecurityToken(ca.issue(csrPem)), secret: 's1', requestId: 'c1' }, ctx());
    await recordComplianceChecksPassed(egs(), egsUnitId, keyId, ctx());
    await recordProductionCsid(egs(), egsUnitId, { keyId, binarySecurityToken: binarySecurityToken(ca.issue(csrPem)), secret: 's2', requestId: 'p1' }, ctx());
    return egsUnitId;
  }

  async function submittedSaudi(workspaceId: string, variant: 'simplified' | null = 'simplified'): Promise<string> {
    const documentId = randomUUID();
    const coreDocument = sampleDocument('SA', { lines: 2, documentNumber: `SA-${documentId.slice(0, 8)}` }) as CoreDocument;
    const documentType = { base: 'tax_invoice', modifiers: [], ...(variant ? { variant } : {}) };
    await execute(store, documentDecider, documentStream(documentId), {
      type: 'Receive',
      event: {
        type: 'DocumentSubmitted',
        data: {
          documentId, uuid: randomUUID(), documentNumber: coreDocument.header!.documentNumber!, country: 'SA', environment: 'sandbox', documentType,
          source: { name: 'erp', version: '1', companyId: null }, format: 'new', externalId: null, destinations: ['TAX_AUTHORITY'], coreDocument,
          validation: { validatedAt: '2026-06-01T09:59:00.000Z' }, xml: null,
        },
      },
    } as never, { now: clock.now(), workspaceId, actor: 'test' });
    return documentId;
  }

  const links = async (stream: string): Promise<ZatcaLink[]> => (await store.readStream(stream)).map((e) => decodeEventData(ZatcaInvoiceChained, e.schemaVersion, e.data) as ZatcaLink);
  const deliveredXml = async (documentId: string): Promise<string> => {
    const delivered = (await store.readStream(documentStream(documentId))).find((e) => e.type === 'DocumentDelivered')!;
    const sha = (delivered.data as { xml: { sha256: string } }).xml.sha256;
    return (await store.readArtifacts([sha])).get(sha)!.toString('utf8');
  };
  const expectGapFree = (chain: ZatcaLink[]) => {
    expect(chain.map((l) => l.counter)).to.deep.equal(chain.map((_, i) => i + 1));
    chain.forEach((l, i) => expect(l.previousInvoiceHash).to.equal(i === 0 ? ZATCA_INITIAL_PREVIOUS_INVOICE_HASH : chain[i - 1]!.invoiceHash));
    expect(new Set(chain.map((l) => l.documentId)).size).to.equal(chain.length);
  };

  it('stamps a simplified and a standard invoice with the unit key, chains them per unit, and the simulator accepts them', async () => {
    const workspaceId = `ws_${randomUUID().slice(0, 8)}`;
    const egsUnitId = await onboardedUnit(workspaceId);
    const first = await submittedSaudi(workspaceId, 'simplified');
    const second = await submittedSaudi(workspaceId, null);
    expect(await deliverDocument(deps(), first)).to.equal('final');
    expect(await deliverDocument(deps(), second)).to.equal('final');
    const chain = await links(zatcaUnitChainStream(egsUnitId));
    expect(chain.map((l) => [l.documentId, l.counter, l.egsUnitId])).to.deep.equal([[first, 1, egsUnitId], [second, 2, egsUnitId]]);
    expectGapFree(chain);
    for (const [documentId, link] of [[first, chain[0]!], [second, chain[1]!]] as const) {
      const xml = await deliveredXml(documentId);
      expect(verifyStamp(xml)).to.deep.equal([]);
      expect(xml).to.include(`<cbc:ID>ICV</cbc:ID><cbc:UUID>${link.counter}</cbc:UUID>`);
      expect(xml).to.include(link.previousInvoiceHash);
      expect(decodeQrTags(/<cbc:ID>QR<\/cbc:ID><cac:Attachment><cbc:EmbeddedDocumentBinaryObject[^>]*>([^<]+)</.exec(xml)![1]!).get(6)!.toString()).to.equal(link.invoiceHash);
    }
    // No link in the seller's unstamped chain.
    expect(await links(zatcaSellerChainStream(workspaceId, 'sandbox', SELLER_VAT))).to.deep.equal([]);
  });

  it('two delivery workers on one EGS unit: every invoice chained once, counters gap-free, no fork', async () => {
    const workspaceId = `ws_${randomUUID().slice(0, 8)}`;
    const egsUnitId = await onboardedUnit(workspaceId);
    const documents: string[] = [];
    for (let i = 0; i < 16; i++) documents.push(await submittedSaudi(workspaceId));
    const second = await PostgresEventStore.connect(testDb().url, { poolSize: 5 });
    try {
      // Each worker takes every document (the overlap a crash or a lost lock gives), in its own order.
      const outcomes = await Promise.all([
        Promise.all(documents.map((d) => deliverDocument(deps(store), d))),
        Promise.all([...documents].reverse().map((d) => deliverDocument(deps(second), d))),
      ]);
      expect(outcomes.flat().filter((o) => o === 'final')).to.have.length(16);
    } finally {
      await second.close();
    }
    const chain = await links(zatcaUnitChainStream(egsUnitId));
    expect(chain).to.have.length(16);
    expectGapFree(chain);
    expect(new Set(chain.map((l) => l.documentId))).to.deep.equal(new Set(documents));
    for (const d of documents.slice(0, 3)) expect(verifyStamp(await deliveredXml(d))).to.deep.equal([]);
  });

  it('a delivery that dies after the authority received the stamped XML sends the same bytes again, and stores them', async () => {
    const workspaceId = `ws_${randomUUID().slice(0, 8)}`;
    const egsUnitId = await onboardedUnit(workspaceId);
    const documentId = await submittedSaudi(workspaceId);
    const sent: Buffer[] = [];
    const real = sandbox();
    const dying: ConnectorRegistry = {
      missing: () => [],
      connectorFor: (env, destination) => {
        const c = real.connectorFor(env, destination)!;
        return {
          name: c.name,
          destination: c.destination,
          finalResult: (r, g) => c.finalResult(r, g),
          deliver: async (request) => {
            sent.push(request.xml!);
            await c.deliver(request);
            throw new Error('killed after the authority received the document');
          },
        };
      },
    };
    clock.advance(1000);
    const crashed = await deliverDocument({ ...deps(), connectors: dying }, documentId).then(() => null, (e: unknown) => e);
    expect(String(crashed)).to.contain('killed');
    clock.advance(60_000); // a later signing time would give other bytes if the stamp were made again
    const answers: DeliveryRequest[] = [];
    const watching: ConnectorRegistry = {
      missing: () => [],
      connectorFor: (env, destination) => {
        const c = real.connectorFor(env, destination)!;
        return { name: c.name, destination: c.destination, finalResult: (r, g) => c.finalResult(r, g), deliver: (request) => (answers.push(request), c.deliver(request)) };
      },
    };
    expect(await deliverDocument({ ...deps(), connectors: watching }, documentId)).to.equal('final');
    expect(answers).to.have.length(1);
    expect(answers[0]!.xml!.equals(sent[0]!)).to.equal(true);
    expect(answers[0]!.zatcaEgsUnitId).to.equal(egsUnitId);
    expect(Buffer.from(await deliveredXml(documentId)).equals(sent[0]!)).to.equal(true);
    expect((await links(zatcaUnitChainStream(egsUnitId))).map((l) => [l.documentId, l.counter])).to.deep.equal([[documentId, 1]]);
  });

  it('keeps the unstamped chain per seller when the seller has no EGS unit (the sandbox as before)', async () => {
    const workspaceId = `ws_${randomUUID().slice(0, 8)}`;
    const documentId = await submittedSaudi(workspaceId);
    expect(await deliverDocument(deps(), documentId)).to.equal('final');
    const chain = await links(zatcaSellerChainStream(workspaceId, 'sandbox', SELLER_VAT));
    expect(chain.map((l) => [l.documentId, l.counter, l.egsUnitId ?? null])).to.deep.equal([[documentId, 1, null]]);
    expect(await deliveredXml(documentId)).not.to.include('UBLExtensions');
  });

  it('the simulator refuses a stamp that does not hold, naming the part', async () => {
    const ca2 = ca;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
    const { buildCsr } = await import('../../commands/zatca/egs-units.js');
    const certificate = ca2.issue(buildCsr({ environment: 'sandbox', sellerVat: SELLER_VAT, subject: { commonName: 'x', serialNumber: '1-a|2-b|3-c', organizationUnit: 'o', organizationName: 'o', country: 'SA', invoiceType: '0100', location: 'l', industry: 'i' } }, privateKey, publicKey.export({ type: 'spki', format: 'pem' }).toString()));
    const { generateInvoiceXml } = await import('../../domain/artifacts/index.js');
    const coreDocument = sampleDocument('SA', { lines: 1, documentNumber: 'SA-BAD-1' }) as CoreDocument;
    const uuid = randomUUID();
    const unsigned = generateInvoiceXml({ country: 'SA', documentType: { base: 'tax_invoice', modifiers: [], variant: 'simplified' }, document: coreDocument, uuid, invoiceCounter: 1 });
    const stamped = stampInvoice(unsigned.xml, { privateKey, certificate }, clock.now());
    const tampered = stamped.xml.replace('<cbc:ID>SA-BAD-1</cbc:ID>', '<cbc:ID>SA-BAD-2</cbc:ID>');
    const request: DeliveryRequest = {
      documentId: randomUUID(), uuid, attempt: 1, environment: 'sandbox', country: 'SA', documentType: { base: 'tax_invoice', modifiers: [], variant: 'simplified' },
      documentNumber: 'SA-BAD-1', coreDocument, xml: Buffer.from(tampered), invoiceHash: stamped.invoiceHash, zatcaEgsUnitId: 'egs',
    };
    const answer = await sandbox().connectorFor('sandbox', 'ZATCA')!.deliver(request);
    expect(answer.kind).to.equal('refused');
    const errors = answer.kind === 'refused' ? answer.errors : [];
    expect(errors.map((e) => [e.code, e.path[0]])).to.deep.equal([['ZATCA_STAMP_INVOICE_HASH', "ds:Reference[@Id='invoiceSignedData']/ds:DigestValue"], ['ZATCA_STAMP_SIGNATURE', 'ds:SignatureValue'], ['ZATCA_STAMP_QR', 'QR tag 6']]);
  });
});
