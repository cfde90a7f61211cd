import { expect } from 'chai';
import { readUbl, screenXml } from '../../domain/purchases/ubl-reader.js';
import { testDb } from '../support/db.js';
import { startTestService, type TestService } from '../support/http.js';
import { freshNumber, uaeInvoice, unifyTenant, type UnifyTenant } from '../unify/support.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { receiver, type Receiver } from './support.js';
import { sourcePath } from '../connect/support.js';
import { companiesHoldingParticipants, companiesHoldingParticipantsQuery } from '../../readmodels/purchases.js';

const XRECHNUNG_INVOICE_DOCTYPE =
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0::2.1';

describe('purchases: the sandbox Peppol network between onboarded companies', function () {
  this.timeout(120000);
  let t: TestService;
  let seller: UnifyTenant;
  let buyer: Receiver;
  let secondBuyer: Receiver;

  before(async () => {
    t = await startTestService();
    seller = await unifyTenant(t);
    buyer = await receiver(t);
  });
  after(async () => t.close());

  async function final(documentId: string) {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const r = await seller.status(documentId, 'read');
      if (['final_valid', 'final_invalid'].includes(r.json.data.state) || Date.now() > deadline) return r.json.data;
      await new Promise((res) => setTimeout(res, 25));
    }
  }

  async function purchasesOf(r: Receiver, expected: number) {
    const today = new Date().toISOString().slice(0, 10);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await r.list(`?type=purchases&from=${today}`);
      expect(res.status, res.text).to.equal(200);
      if (res.json.data.items.length >= expected || Date.now() > deadline) return res.json.data.items as any[];
      await new Promise((res) => setTimeout(res, 25));
    }
  }

  async function send(payload: Record<string, any>, country = 'AE') {
    const res = await seller.submit(seller.request(payload, { country }));
    expect(res.status, res.text).to.equal(200);
    return res.json.documentId as string;
  }

  it('an AE invoice to an onboarded company is received by its workspace: parsed from the exact bytes sent, attributed to the branch of the buyer reference', async () => {
    const payload = uaeInvoice({ documentNumber: freshNumber('NET'), lines: 4 });
    payload.parties.buyer.peppolId = buyer.tin;
    payload.header.buyerReference = buyer.company.userGivenBranchId;
    const salesId = await send(payload);
    const sales = await final(salesId);
    expect(sales.state).to.equal('final_valid');
    // The sender's delivery record names the receiving participant.
    expect(sales.government).to.include({ receiverParticipantId: `0235:${buyer.tin}`, receiverRegistered: true, receivingAccessPoint: 'sandbox-ap' });

    const [item] = await purchasesOf(buyer, 1);
    expect(item).to.include({ status: 'purchase.invoice.stored', country: 'AE', environment: 'sandbox', invoiceNumber: payload.header.documentNumber, supplierName: payload.parties.seller.name });
    const read = await buyer.read(item.documentId);
    expect(read.status, read.text).to.equal(200);
    const d = read.json.data;
    // The exact bytes the access point transmitted.
    expect(d.artifacts.invoiceXmlBase64).to.equal(sales.artifacts.invoiceXmlBase64);
    expect(d.coreDocument).to.deep.equal(readUbl(screenXml(Buffer.from(sales.artifacts.invoiceXmlBase64, 'base64'), 1e7)).coreDocument);
    expect(d.coreDocument.totals.totalAmountIncludingTax).to.equal(payload.totals.totalAmountIncludingTax);
    expect(d.coreDocument.lineItems).to.have.length(4);
    expect(d).to.include({ channel: 'peppol_sandbox', senderParticipantId: `0235:${payload.parties.seller.peppolId}`, receiverParticipantId: `0235:${buyer.tin}` });
    expect(d.attribution).to.deep.equal({
      companyId: buyer.company.companyId,
      sourceName: buyer.company.sourceName,
      sourceVersion: buyer.company.sourceVersion,
      branchId: buyer.company.branchId,
      userGivenBranchId: buyer.company.userGivenBranchId,
    });
    // The stored event carries what the webhook and the search index need.
    const events = await t.service.runtime.store.readStream(`purchase-${item.documentId}`);
    const stored = events[1]!;
    expect(stored.type).to.equal('PurchaseInvoiceStored');
    expect(stored.metadata).to.include({ workspaceId: buyer.workspaceId, environment: 'sandbox' });
    expect(stored.data).to.include.keys('coreDocument', 'attribution', 'receivedAt', 'storedAt', 'environment', 'workspaceId', 'documentId', 'status');
    // The seller's workspace received nothing.
    const sellerList = await buyer.list(`?type=purchases&from=${new Date().toISOString().slice(0, 10)}`, seller.apiKey);
    expect(sellerList.json.data.items).to.deep.equal([]);
  });

  it('a second branch of the buyer: the buyer reference attributes the purchase to it', async () => {
    const added = await buyer.client.post(`/v3/connect/companies/${buyer.company.companyId}/branches`, { branchName: 'Warehouse', sourceName: `WH ${Date.now()}`, sourceVersion: 'v1' });
    expect(added.status, added.text).to.be.oneOf([200, 201]);
    const branch = added.json.data;
    await new Promise((res) => setTimeout(res, 200));
    const payload = uaeInvoice({ documentNumber: freshNumber('BR') });
    payload.parties.buyer.peppolId = buyer.tin;
    payload.header.buyerReference = branch.userGivenBranchId;
    await final(await send(payload));
    const items = await purchasesOf(buyer, 2);
    const item = items.find((i) => i.invoiceNumber === payload.header.documentNumber);
    const d = (await buyer.read(item.documentId)).json.data;
    expect(d.attribution).to.include({ branchId: branch.branchId, userGivenBranchId: branch.userGivenBranchId, sourceName: branch.sourceName });
  });

  it('every workspace whose active company holds the participant id receives it; a redelivery is stored once', async () => {
    // Another workspace onboards the same TIN: the same participant id.
    secondBuyer = await receiver(t);
    const again = await secondBuyer.client.onboard({ tin: buyer.tin });
    expect(again.peppolParticipantId).to.equal(`0235:${buyer.tin}`);
    const payload = uaeInvoice({ documentNumber: freshNumber('TWO') });
    payload.parties.buyer.peppolId = buyer.tin;
    const salesId = await send(payload);
    await final(salesId);
    const inSecond = (await purchasesOf(secondBuyer, 1)).filter((i) => i.invoiceNumber === payload.header.documentNumber);
    expect(inSecond).to.have.length(1);
    const inFirst = (await purchasesOf(buyer, 3)).filter((i) => i.invoiceNumber === payload.header.documentNumber);
    expect(inFirst).to.have.length(1);
    // The access point receives the same document again (a retry after a lost answer): nothing new is stored.
    const connector = t.service.processes.connectors.connectorFor('sandbox', 'PEPPOL')!;
    const status = (await seller.status(salesId, 'read')).json.data;
    const answer = await connector.deliver({
      documentId: salesId,
      uuid: status.compliance.uuid,
      attempt: 2,
      environment: 'sandbox',
      country: 'AE',
      documentType: { base: 'tax_invoice', modifiers: [] },
      documentNumber: payload.header.documentNumber,
      coreDocument: payload,
      xml: Buffer.from(status.artifacts.invoiceXmlBase64, 'base64'),
    });
    expect(answer.kind).to.equal('delivered');
    const [row] = await testDb().knex('purchase_invoices').where({ invoice_number: payload.header.documentNumber }).count({ n: '*' });
    expect(Number(row!.n)).to.equal(2);
  });

  it('a DE invoice addressed to an onboarded participant is received too, as an XRechnung 3.0 document type', async () => {
    const payload = sampleDocument('DE', { lines: 2, documentNumber: freshNumber('DE') }) as Record<string, any>;
    payload.parties.buyer.peppolId = buyer.tin;
    payload.extensions = { ...(payload.extensions ?? {}), peppol_buyer_peppolIdScheme: '0235' };
    const salesId = await send(payload, 'DE');
    const sales = await final(salesId);
    expect(sales.state).to.equal('final_valid');
    // XRechnung travels on Peppol with its own registered document type, under the Peppol billing process.
    expect(sales.government).to.include({
      receiverParticipantId: `0235:${buyer.tin}`,
      receiverRegistered: true,
      documentTypeId: XRECHNUNG_INVOICE_DOCTYPE,
      processId: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
    });
    expect(sales.compliance).to.include({ specificationIdentifier: 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0' });
    const item = (await purchasesOf(buyer, 4)).find((i) => i.invoiceNumber === payload.header.documentNumber);
    // Filed under the receiving company's country; the supplier's is a field of its own.
    expect(item).to.include({ country: 'AE' });
    expect((await buyer.read(item!.documentId)).json.data).to.include({ country: 'AE', supplierCountry: 'DE' });
    // The received event keeps the transmission record, with the document type the message carried.
    const received = (await t.service.runtime.store.readStream(`purchase-${item!.documentId}`))[0]!;
    expect((received.data as any).transmission).to.include({ documentTypeId: XRECHNUNG_INVOICE_DOCTYPE });
  });

  it('an invoice to a participant no onboarded company holds keeps the sandbox behaviour: delivered, final_valid, received by nobody', async () => {
    const before = Number((await testDb().knex('purchase_invoices').count({ n: '*' }))[0]!.n);
    const payload = uaeInvoice({ documentNumber: freshNumber('NOBODY') });
    payload.parties.buyer.peppolId = '1999999999';
    const sales = await final(await send(payload));
    expect(sales.state).to.equal('final_valid');
    expect(sales.government).to.include({ status: 'VALID', receiverParticipantId: '0235:1999999999', receiverRegistered: false });
    await new Promise((res) => setTimeout(res, 300));
    expect(Number((await testDb().knex('purchase_invoices').count({ n: '*' }))[0]!.n)).to.equal(before);
  });

  it('the receivers of a delivery are found by an index on the participant id, not by reading every company', async () => {
    const participant = `0235:${buyer.tin}`;
    const [found] = await companiesHoldingParticipants(testDb().knex, [{ participantId: participant, environment: 'sandbox' }]);
    expect(found!.map((c) => c.companyId)).to.include(buyer.company.companyId);
    const plan = await testDb().knex.transaction(async (trx) => {
      // On a table this small a scan is cheaper, so the planner is told to take an index if it has one.
      await trx.raw('set local enable_seqscan = off');
      const lookups = [
        { participantId: participant, environment: 'sandbox' },
        { participantId: '0235:1999999999', environment: 'sandbox' },
      ];
      const { sql, bindings } = companiesHoldingParticipantsQuery(trx, lookups).toSQL();
      return JSON.stringify((await trx.raw(`explain (format json) ${sql}`, bindings)).rows);
    });
    expect(plan).to.contain('"Index Name":"connect_companies_participant"');
    expect(plan).to.match(/"Index Cond":"\(\(peppol_participant_id = /);
  });

  it('the receivers of several deliveries in one statement: one answer per look-up, in their order', async () => {
    const participant = `0235:${buyer.tin}`;
    const statements: string[] = [];
    const noted = (q: { sql: string }) => statements.push(q.sql);
    testDb().knex.on('query', noted);
    let found;
    try {
      found = await companiesHoldingParticipants(testDb().knex, [
        { participantId: '0235:1999999999', environment: 'sandbox' },
        { participantId: participant, environment: 'sandbox' },
        { participantId: participant, environment: 'production' },
        { participantId: participant, environment: 'sandbox' },
      ]);
    } finally {
      testDb().knex.off('query', noted);
    }
    const [alone] = await companiesHoldingParticipants(testDb().knex, [{ participantId: participant, environment: 'sandbox' }]);
    expect(alone!.map((c) => c.companyId)).to.include(buyer.company.companyId);
    expect(found).to.deep.equal([[], alone, [], alone]);
    // One statement: the look-ups with the sources of the companies found (the service's own statements run meanwhile).
    expect(statements.filter((sql) => /with ordinality as k\(participant_id/.test(sql))).to.have.length(1);
    expect(statements.filter((sql) => /from "connect_sources"/.test(sql))).to.have.length(0);
    expect(alone![0]!.sources.length).to.be.greaterThan(0);
    expect(alone![0]!.sources[0]).to.have.all.keys('sourceName', 'sourceVersion', 'branchId', 'userGivenBranchId', 'status');
  });

  it('a company whose sources are all archived (inactive) receives nothing', async () => {
    const gone = await receiver(t);
    const archived = await gone.client.del(sourcePath(gone.company.sourceName, gone.company.sourceVersion));
    expect(archived.status, archived.text).to.be.oneOf([200, 204]);
    await new Promise((res) => setTimeout(res, 200));
    const payload = uaeInvoice({ documentNumber: freshNumber('GONE') });
    payload.parties.buyer.peppolId = gone.tin;
    const sales = await final(await send(payload));
    expect(sales.state).to.equal('final_valid');
    expect(sales.government).to.include({ receiverRegistered: false });
    await new Promise((res) => setTimeout(res, 300));
    const [row] = await testDb().knex('purchase_invoices').where({ workspace_id: gone.workspaceId }).count({ n: '*' });
    expect(Number(row!.n)).to.equal(0);
  });

  it('a refused transmission (SBX-REJECT) stores nothing', async () => {
    const before = Number((await testDb().knex('purchase_invoices').count({ n: '*' }))[0]!.n);
    const payload = uaeInvoice({ documentNumber: `SBX-REJECT-${freshNumber()}` });
    payload.parties.buyer.peppolId = buyer.tin;
    const sales = await final(await send(payload));
    expect(sales.state).to.equal('final_invalid');
    await new Promise((res) => setTimeout(res, 300));
    expect(Number((await testDb().knex('purchase_invoices').count({ n: '*' }))[0]!.n)).to.equal(before);
  });
});
