/**
 * Two instances of the service as two Peppol access points exchanging over AS4 (seller workspace
 * on one, buyer on the other, each with its own database): production documents leave through the
 * AS4 connector and arrive as purchases; discovery refusals, a receiver the other side does not
 * serve, and a redelivery of the same document end as they should.
 */
import { expect } from 'chai';
import { createTestPki, type TestPki } from './support/pki.js';
import { startAccessPoint, tableDiscovery, type DiscoveryEntry } from './support/access-point.js';
import { openOwnTestDatabase } from '../support/db.js';
import { call, type TestService } from '../support/http.js';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import Koa from 'koa';
import { checkResponseAgainstDocument, schemaErrors } from '../support/openapi-check.js';
import { registeredRoutes } from '../../http/app.js';
import { as4Middleware } from '../../http/as4/routes.js';
import { openApiDocument } from '../../http/openapi/index.js';
import { createLogger } from '../../platform/logger.js';
import { freshNumber, unifyTenant, type UnifyTenant } from '../unify/support.js';
import { receiver, type Receiver } from '../purchases/support.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { freshTin } from '../connect/support.js';
import { documentStream } from '../../domain/document/document.js';

describe('Peppol access point: two service instances exchanging over AS4', function () {
  this.timeout(180_000);
  let pki: TestPki;
  let a: TestService; // the seller's access point
  let b: TestService; // the buyer's access point
  let ownDb: Awaited<ReturnType<typeof openOwnTestDatabase>>;
  let seller: UnifyTenant;
  let buyer: Receiver;
  const table = new Map<string, DiscoveryEntry>();
  const discovery = tableDiscovery(table);

  before(async () => {
    pki = await createTestPki();
    ownDb = await openOwnTestDatabase('peppol_b');
    b = await startAccessPoint(pki, pki.service2, tableDiscovery(new Map()), { db: ownDb.db });
    a = await startAccessPoint(pki, pki.service, discovery);
    seller = await unifyTenant(a, { environment: 'production' });
    buyer = await receiver(b, { environment: 'production' }, 'production');
    table.set(`0235:${buyer.tin}`.toLowerCase(), { url: `${b.url}/as4`, certificatePem: pki.service2.certPem });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await ownDb?.drop();
  });

  function deInvoice(buyerTin: string, number = freshNumber('AS4')) {
    const payload = sampleDocument('DE', { lines: 2, documentNumber: number }) as Record<string, any>;
    payload.parties.buyer.peppolId = buyerTin;
    payload.extensions = { ...(payload.extensions ?? {}), peppol_buyer_peppolIdScheme: '0235' };
    return payload;
  }

  async function submit(payload: Record<string, any>) {
    const res = await seller.submit(seller.request(payload, { country: 'DE' }));
    expect(res.status, res.text).to.equal(200);
    return res.json.documentId as string;
  }

  async function final(documentId: string) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await seller.status(documentId, 'read');
      if (['final_valid', 'final_invalid'].includes(r.json.data?.state) || Date.now() > deadline) return r.json.data;
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  async function purchases(r: Receiver, number: string) {
    const today = new Date().toISOString().slice(0, 10);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await r.list(`?type=purchases&from=${today}`);
      expect(res.status, res.text).to.equal(200);
      const items = (res.json.data.items as any[]).filter((i) => i.invoiceNumber === number);
      if (items.length > 0 || Date.now() > deadline) return items;
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  it('a production document goes out over AS4 and becomes a purchase of the buyer on the other instance', async () => {
    const payload = deInvoice(buyer.tin);
    const salesId = await submit(payload);
    const sales = await final(salesId);
    expect(sales.state, JSON.stringify(sales)).to.equal('final_valid');
    expect(sales.government).to.include({ network: 'PEPPOL', accessPoint: pki.service.commonName, receivingAccessPoint: pki.service2.commonName, receiverParticipantId: `0235:${buyer.tin}`, status: 'DELIVERED', alreadyReceived: false });
    expect(sales.government.messageId).to.be.a('string');
    const [item] = await purchases(buyer, payload.header.documentNumber);
    expect(item, 'purchase on the buyer side').to.not.equal(undefined);
    expect(item).to.include({ environment: 'production', invoiceNumber: payload.header.documentNumber });
    const read = await buyer.read(item.documentId);
    expect(read.status, read.text).to.equal(200);
    expect(read.json.data).to.include({ channel: 'peppol_as4', receiverParticipantId: `0235:${buyer.tin}` });
    // The exact UBL the seller's access point transmitted.
    expect(Buffer.from(read.json.data.artifacts.invoiceXmlBase64, 'base64').toString('utf8')).to.equal(
      Buffer.from(sales.artifacts.invoiceXmlBase64, 'base64').toString('utf8').replace(/^<\?xml[^?]*\?>\s*/, '').trim(),
    );
    expect(discovery.lookups.at(-1)).to.deep.include({ participant: `0235:${buyer.tin}` });
  });

  it('a participant not registered ends final_invalid with PEPPOL_PARTICIPANT_NOT_REGISTERED; a document type not supported with its own code', async () => {
    const unknown = await final(await submit(deInvoice(freshTin())));
    expect(unknown.state).to.equal('final_invalid');
    expect(unknown.errors[0]).to.include({ code: 'PEPPOL_PARTICIPANT_NOT_REGISTERED', source: 'delivery' });
    const tin = freshTin();
    table.set(`0235:${tin}`, { url: `${b.url}/as4`, certificatePem: pki.service2.certPem, documentTypes: ['urn:some:other::Invoice##x::2.1'] });
    const unsupported = await final(await submit(deInvoice(tin)));
    expect(unsupported.state).to.equal('final_invalid');
    expect(unsupported.errors[0]).to.include({ code: 'PEPPOL_DOCUMENT_TYPE_NOT_SUPPORTED', source: 'delivery' });
  });

  it('a receiver registered in the SMP but not an active company of the receiving instance: its ebMS error ends the delivery, nothing stored', async () => {
    const tin = freshTin();
    table.set(`0235:${tin}`, { url: `${b.url}/as4`, certificatePem: pki.service2.certPem });
    const sales = await final(await submit(deInvoice(tin)));
    expect(sales.state).to.equal('final_invalid');
    expect(sales.errors[0]).to.include({ code: 'EBMS:0004', source: 'delivery' });
    expect(sales.errors[0].message).to.match(/NOT_SERVICED/);
  });

  it('the same document sent again (a retry after a lost receipt) carries the same message id and is stored once', async () => {
    const payload = deInvoice(buyer.tin);
    const salesId = await submit(payload);
    const sales = await final(salesId);
    expect(sales.state).to.equal('final_valid');
    const [submitted] = await a.service.runtime.store.readStream(documentStream(salesId), { maxCount: 1 });
    const uuid = (submitted!.data as { uuid: string }).uuid;
    const connector = a.service.processes.connectors.connectorFor('production', 'PEPPOL')!;
    expect(connector.name).to.equal('peppol-as4');
    const again = await connector.deliver({
      documentId: salesId,
      uuid,
      attempt: 2,
      environment: 'production',
      country: 'DE',
      documentType: { base: 'tax_invoice', modifiers: [] },
      documentNumber: payload.header.documentNumber,
      coreDocument: payload,
      xml: Buffer.from(sales.artifacts.invoiceXmlBase64, 'base64'),
    });
    expect(again).to.deep.include({ kind: 'delivered' });
    const government = (again as { government: Record<string, unknown> }).government;
    expect(government).to.include({ messageId: sales.government.messageId, sbdhInstanceId: sales.government.sbdhInstanceId });
    const items = await purchases(buyer, payload.header.documentNumber);
    expect(items).to.have.length(1);
  });

  it('a received document passes the same UBL 2.1 schema check as an imported one: a schema-invalid payload is refused (EBMS:0003), nothing stored', async () => {
    const payload = deInvoice(buyer.tin);
    const salesId = await submit(payload);
    const sales = await final(salesId);
    expect(sales.state).to.equal('final_valid');
    // The same document, with an element UBL 2.1 does not have, sent as a new message (another UUID).
    const xml = Buffer.from(sales.artifacts.invoiceXmlBase64, 'base64').toString('utf8').replace('</cbc:IssueDate>', '</cbc:IssueDate><cbc:NotUbl>1</cbc:NotUbl>');
    const number = freshNumber('AS4XSD');
    const connector = a.service.processes.connectors.connectorFor('production', 'PEPPOL')!;
    const answer = await connector.deliver({
      documentId: salesId,
      uuid: '6f1f1a52-0000-4000-8000-000000000001',
      attempt: 1,
      environment: 'production',
      country: 'DE',
      documentType: { base: 'tax_invoice', modifiers: [] },
      documentNumber: number,
      coreDocument: payload,
      xml: Buffer.from(xml.replace(`<cbc:ID>${payload.header.documentNumber}</cbc:ID>`, `<cbc:ID>${number}</cbc:ID>`)),
    });
    expect(answer.kind, JSON.stringify(answer)).to.equal('refused');
    const error = JSON.stringify(answer);
    expect(error).to.contain('EBMS:0003').and.contain('XML_SCHEMA_INVALID');
    expect(await purchases(buyer, number)).to.have.length(0);
  });

  it('the sandbox is unchanged, /readyz lists the production Peppol connector as present, and GET /as4 is refused', async () => {
    const ready = await call(`${a.url}/readyz`);
    const connectors = ready.json.checks.connectors;
    expect(connectors.present).to.deep.include({ environment: 'production', destination: 'PEPPOL', connector: 'peppol-as4' });
    expect(connectors.missing).to.not.deep.include({ environment: 'production', destination: 'PEPPOL' });
    expect(a.service.processes.connectors.connectorFor('sandbox', 'PEPPOL')!.name).to.equal('peppol-sandbox-ap');
    expect(a.service.processes.connectors.connectorFor('production', 'ZATCA')).to.equal(null);
    const get = await call(`${b.url}/as4`);
    expect(get.status).to.equal(405);
    expect(get.headers.get('allow')).to.equal('POST');
  });

  describe('POST /as4 answers what the OpenAPI document says', () => {
    /** A POST to the endpoint, its answer checked against the document's operation (status, content type, body, headers). */
    async function post(url: string, contentType: string, body: string | Uint8Array<ArrayBuffer>) {
      const res = await fetch(`${url}/as4`, { method: 'POST', headers: { 'content-type': contentType }, body });
      const text = await res.text();
      const json = (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined;
      const result = { status: res.status, headers: res.headers, text, json };
      checkResponseAgainstDocument('POST', `${url}/as4`, result);
      return result;
    }

    it('is a registered route of an instance configured as an access point', () => {
      expect(registeredRoutes(b.service.app)).to.deep.include({ family: 'system', path: '/as4', methods: ['POST'] });
    });

    it('413 in the system envelope for a body over the bound, before anything is parsed', async () => {
      const tooLarge = await post(b.url, 'multipart/related; boundary=x', new Uint8Array(30 * 1024 * 1024));
      expect(tooLarge.status).to.equal(413);
      expect(tooLarge.json.code).to.equal('payload_too_large');
      expect(tooLarge.headers.get('x-request-id')).to.match(/^req_/);
    });

    it('a malformed body: a signed ebMS error with HTTP 200 (application/soap+xml), never a 500', async () => {
      for (const [type, body, code] of [
        ['multipart/related; boundary="b"; type="application/soap+xml"', '--b\r\nContent-Type: application/soap+xml\r\n\r\n<S12:Envelope', 'EBMS:0007'],
        ['multipart/related; boundary="b"; type="application/soap+xml"', '--b\r\nContent-Type: application/soap+xml\r\n\r\n<S12:Envelope\r\n--b--\r\n', 'EBMS:0009'],
        ['multipart/related', 'no boundary', 'EBMS:0007'],
        ['multipart/related; boundary=""', '--\r\n', 'EBMS:0007'],
        ['application/soap+xml', '<not-soap/>', 'EBMS:0009'],
        ['application/soap+xml', '', 'EBMS:0009'],
        ['text/plain', 'hello', 'EBMS:0007'],
      ] as const) {
        const res = await post(b.url, type, body);
        expect(res.status, type).to.equal(200);
        expect(res.headers.get('content-type'), type).to.match(/^application\/soap\+xml/);
        expect(res.text, type).to.contain(`errorCode="${code}"`).and.contain('<ds:Signature');
      }
    });

    it('an attachment whose MIME header is not UTF-8 was a 500 (schemathesis, npm run fuzz): now EBMS:0007 with HTTP 200', async () => {
      const body = Buffer.concat([
        Buffer.from('--b\r\nContent-Type: application/soap+xml\r\n\r\n<S12:Envelope xmlns:S12="http://www.w3.org/2003/05/soap-envelope"/>\r\n--b\r\nContent-ID: <p'),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('>\r\n\r\nabc\r\n--b--\r\n'),
      ]);
      const res = await post(b.url, 'multipart/related; boundary=b; type="application/soap+xml"', new Uint8Array(body));
      expect(res.status, res.text).to.equal(200);
      expect(res.text).to.contain('errorCode="EBMS:0007"').and.contain('not valid UTF-8');
    });

    it('400 in the system envelope when the body ends before its announced length (read by the endpoint itself: over HTTP the server\'s parser answers first)', async () => {
      const req = new IncomingMessage(new Socket());
      req.method = 'POST';
      req.url = '/as4';
      req.headers = { 'content-type': 'multipart/related; boundary=b', 'content-length': '100' };
      req.push('--b\r\n');
      req.push(null);
      const ctx = new Koa().createContext(req, new ServerResponse(req));
      let reached = false;
      await as4Middleware({ receive: b.service.deps.as4!.receive, maxBodyBytes: 1024 }, createLogger('silent'))(ctx, async () => {
        reached = true;
      });
      expect(reached).to.equal(false);
      expect(ctx.status).to.equal(400);
      expect(ctx.body).to.deep.equal({ code: 'bad_request', message: 'the request body could not be read' });
      const documented = (openApiDocument() as any).paths['/as4'].post.responses['400'].content['application/json'].schema;
      expect(schemaErrors(documented, ctx.body)).to.deep.equal([]);
    });
  });
});
