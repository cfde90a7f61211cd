/**
 * The corpus of received documents (test/purchases/corpus/, manifest.json): each file imported,
 * in order, into one workspace through `receivePurchaseDocument`, the path the admin CLI, the
 * sandbox Peppol network and an AS4 endpoint share; each outcome as the manifest expects it.
 * No document whose bytes differ from every stored one is answered as a duplicate; documents
 * sharing a supplier, type and number are flagged, never dropped; every stored purchase is found
 * by the invoice query under the receiving company's country, whatever its supplier's; 20
 * concurrent receivers of one document store it once.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ImportRefused, receivePurchaseDocument, type ImportDeps, type ReceivedMessage } from '../../commands/purchases/import.js';
import { purchaseStream } from '../../domain/purchases/purchase.js';
import { systemClock } from '../../platform/clock.js';
import { testDb } from '../support/db.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { invoiceXml, receiver, type Receiver } from './support.js';

const CORPUS = fileURLToPath(new URL('./corpus/', import.meta.url));

interface Expected {
  file: string;
  family: string;
  outcome: 'stored' | 'duplicate' | 'refused';
  code?: string;
  duplicateOf?: string;
  probableResendOf?: string[];
  documentNumber?: string;
  documentBase?: string;
  supplierCountry?: string;
  payable?: number;
  lines?: number;
  notes?: number;
  allowanceTotalAmount?: number;
  chargeTotalAmount?: number;
  growAttachmentToBytes?: number;
  growCommentToBytes?: number;
}

const manifest = JSON.parse(readFileSync(path.join(CORPUS, 'manifest.json'), 'utf8')) as { maxXmlBytes: number; receiverCountry: string; imports: Expected[] };

/** A corpus file's bytes, grown to the manifest's size where it says so. */
export function corpusBytes(e: Expected): Buffer {
  const raw = readFileSync(path.join(CORPUS, e.file));
  const grow = (marker: RegExp, size: number, fill: (n: number) => string) => {
    const text = raw.toString('utf8');
    const m = marker.exec(text)!;
    const missing = size - Buffer.byteLength(text);
    const out = Buffer.from(text.slice(0, m.index) + fill(missing) + text.slice(m.index));
    expect(out.byteLength).to.equal(size);
    return out;
  };
  // Base64 comes in groups of 4: the text node is padded with line breaks, as MIME base64 is.
  if (e.growAttachmentToBytes) return grow(/<\/cbc:EmbeddedDocumentBinaryObject>/, e.growAttachmentToBytes, (n) => 'QUFB'.repeat(Math.floor(n / 4)) + '\n'.repeat(n % 4));
  if (e.growCommentToBytes) return grow(/COMMENT/, e.growCommentToBytes, (n) => 'c'.repeat(n));
  return raw;
}

describe('purchases: the corpus of received documents', function () {
  this.timeout(600000);
  let t: TestService;
  let r: Receiver;
  let deps: ImportDeps;
  const ctx = () => ({ now: new Date(), actor: 'test' });
  const message = (bytes: Uint8Array, extra: Partial<ReceivedMessage> = {}): ReceivedMessage => ({
    bytes,
    environment: 'sandbox',
    channel: 'ubl_import',
    to: { workspaceId: r.workspaceId, companyId: r.company.companyId },
    ...extra,
  });
  const query = (body: Record<string, unknown>) =>
    call(`${t.url}/invoices/query`, { method: 'POST', headers: { authorization: `Bearer ${r.apiKey}` }, body: { type: 'purchases', environment: 'sandbox', limit: 100, ...body } });
  const rows = async () => Number((await testDb().knex('purchase_invoices').where({ workspace_id: r.workspaceId }).count({ n: '*' }))[0]!.n);

  before(async () => {
    t = await startTestService();
    r = await receiver(t);
    deps = { store: t.service.runtime.store, knex: t.service.runtime.db.knex, clock: systemClock, maxXmlBytes: manifest.maxXmlBytes };
  });
  after(async () => t?.close());

  const byFile = new Map<string, { documentId: string; probableResendOf: string[] }>();

  it('imports every file with the outcome the manifest expects', async () => {
    expect(r.company.countryCode).to.equal(manifest.receiverCountry);
    const outcomes: string[] = [];
    for (const e of manifest.imports) {
      const label = `${e.file} (${e.family})`;
      let out;
      try {
        out = await receivePurchaseDocument(deps, message(corpusBytes(e)), ctx());
      } catch (err) {
        if (!(err instanceof ImportRefused)) throw err;
        expect(e.outcome, `${label}: refused ${err.code} ${err.message}`).to.equal('refused');
        expect(err.code, label).to.equal(e.code);
        outcomes.push(`${e.file}: refused ${err.code}`);
        continue;
      }
      expect(e.outcome, label).to.not.equal('refused');
      const [p] = out.purchases;
      expect(out.purchases, label).to.have.length(1);
      if (e.outcome === 'duplicate') {
        expect(p!.duplicate, label).to.equal(true);
        expect(p!.documentId, label).to.equal(byFile.get(e.duplicateOf!)!.documentId);
      } else {
        expect(p!.duplicate, label).to.equal(false);
        expect(out.documentNumber, label).to.equal(e.documentNumber);
        expect(p!.probableResendOf, label).to.deep.equal((e.probableResendOf ?? []).map((f) => byFile.get(f)!.documentId));
        byFile.set(e.file, { documentId: p!.documentId, probableResendOf: p!.probableResendOf });
      }
      outcomes.push(`${e.file}: ${e.outcome}`);
    }
    const stored = manifest.imports.filter((e) => e.outcome === 'stored').length;
    expect(new Set([...byFile.values()].map((v) => v.documentId)).size).to.equal(stored);
    await t.settleAll();
    expect(await rows()).to.equal(stored);
  });

  it('keeps what each stored document says: number, type, totals, lines, every note, allowance and charge totals', async () => {
    for (const e of manifest.imports.filter((x) => x.outcome === 'stored')) {
      const read = await r.read(byFile.get(e.file)!.documentId);
      expect(read.status, e.file).to.equal(200);
      const d = read.json.data;
      const core = d.coreDocument;
      expect(d.invoiceNumber, e.file).to.equal(e.documentNumber);
      expect(d.documentType.base, e.file).to.equal(e.documentBase ?? 'tax_invoice');
      expect(d.country, e.file).to.equal(manifest.receiverCountry);
      expect(d.supplierCountry, e.file).to.equal(e.supplierCountry);
      expect(core.totals.amountDue, e.file).to.equal(e.payable);
      expect(core.lineItems, e.file).to.have.length(e.lines!);
      if (e.notes) expect(core.header.notes, e.file).to.have.length(e.notes);
      if (e.allowanceTotalAmount !== undefined) expect(core.totals.allowanceTotalAmount, e.file).to.equal(e.allowanceTotalAmount);
      if (e.chargeTotalAmount !== undefined) expect(core.totals.chargeTotalAmount, e.file).to.equal(e.chargeTotalAmount);
      expect(d.probableResendOf, e.file).to.deep.equal(byFile.get(e.file)!.probableResendOf);
      expect(d.artifacts.invoiceXmlBytes, e.file).to.equal(corpusBytes(e).byteLength);
    }
  });

  it('finds every stored purchase by the invoice query under the receiving company\'s country, and filters on the supplier\'s', async () => {
    const found = await query({ country: manifest.receiverCountry });
    expect(found.status, JSON.stringify(found.json)).to.equal(200);
    const ids = found.json.data.documents.map((d: { documentId: string }) => d.documentId).sort();
    expect(ids).to.deep.equal([...byFile.values()].map((v) => v.documentId).sort());
    for (const country of ['SG', 'JP', 'AU', 'GB', 'NO', 'DK', 'SE']) {
      const expected = manifest.imports.filter((e) => e.outcome === 'stored' && e.supplierCountry === country).map((e) => byFile.get(e.file)!.documentId);
      const res = await query({ country: manifest.receiverCountry, filters: [{ id: 'coreDocument.parties.seller.address.country', value: [country.toLowerCase()] }] });
      expect(res.status).to.equal(200);
      expect(res.json.data.documents.map((d: { documentId: string }) => d.documentId).sort(), country).to.deep.equal(expected.sort());
    }
    // A purchase is not filed under its supplier's country.
    const sg = await query({ country: 'BE' });
    expect(sg.json.data.documents).to.have.length(0);
  });

  it('stores one document once when 20 receivers import it at the same moment', async () => {
    const bytes = Buffer.from(invoiceXml({ number: 'RACE-1', buyerTin: r.tin }));
    const before = await rows();
    const results = await Promise.all(Array.from({ length: 20 }, () => receivePurchaseDocument(deps, message(bytes), ctx())));
    const purchases = results.map((x) => x.purchases[0]!);
    expect(new Set(purchases.map((p) => p.documentId)).size).to.equal(1);
    expect(purchases.filter((p) => !p.duplicate)).to.have.length(1);
    expect(purchases.filter((p) => p.duplicate)).to.have.length(19);
    expect(await t.service.runtime.store.readStream(purchaseStream(purchases[0]!.documentId))).to.have.length(2);
    await t.settleAll();
    expect(await rows()).to.equal(before + 1);
  });

  it('stores every one of several different documents with one number arriving at once, flagging all but the first', async () => {
    const before = await rows();
    const docs = Array.from({ length: 6 }, (_, i) => Buffer.from(invoiceXml({ number: 'RACE-2', buyerTin: r.tin, lines: i + 1 })));
    const results = await Promise.all(docs.map((bytes) => receivePurchaseDocument(deps, message(bytes), ctx())));
    const purchases = results.map((x) => x.purchases[0]!);
    expect(purchases.every((p) => !p.duplicate)).to.equal(true);
    expect(new Set(purchases.map((p) => p.documentId)).size).to.equal(6);
    // The number stream orders them: the k-th stored names the k - 1 before it.
    const sizes = purchases.map((p) => p.probableResendOf.length).sort();
    expect(sizes).to.deep.equal([0, 1, 2, 3, 4, 5]);
    await t.settleAll();
    expect(await rows()).to.equal(before + 6);
  });

  it('over Peppol, the same AS4 message id or SBDH instance identifier is the same purchase even when the bytes differ', async () => {
    const first = Buffer.from(invoiceXml({ number: 'AS4-1', buyerTin: r.tin }));
    const changed = Buffer.from(invoiceXml({ number: 'AS4-1', buyerTin: r.tin, lines: 3 }));
    const other = Buffer.from(invoiceXml({ number: 'AS4-2', buyerTin: r.tin }));
    const peppol = (bytes: Buffer, ids: Record<string, string>) => message(bytes, { channel: 'peppol_as4', transmission: ids, to: { participantId: `0235:${r.tin}` } });
    const a = (await receivePurchaseDocument(deps, peppol(first, { as4MessageId: 'msg-1@ap.example', sbdhInstanceId: 'sbdh-1' }), ctx())).purchases[0]!;
    expect(a.duplicate).to.equal(false);
    const sameMessage = (await receivePurchaseDocument(deps, peppol(changed, { as4MessageId: 'msg-1@ap.example' }), ctx())).purchases[0]!;
    expect(sameMessage).to.include({ duplicate: true, documentId: a.documentId });
    const sameInstance = (await receivePurchaseDocument(deps, peppol(changed, { as4MessageId: 'msg-2@ap.example', sbdhInstanceId: 'sbdh-1' }), ctx())).purchases[0]!;
    expect(sameInstance).to.include({ duplicate: true, documentId: a.documentId });
    // The same bytes through the file import are the same purchase too.
    const imported = (await receivePurchaseDocument(deps, message(first), ctx())).purchases[0]!;
    expect(imported).to.include({ duplicate: true, documentId: a.documentId });
    // New ids, new bytes: a new purchase, flagged as a probable re-send of the first.
    const resent = (await receivePurchaseDocument(deps, peppol(changed, { as4MessageId: 'msg-3@ap.example', sbdhInstanceId: 'sbdh-3' }), ctx())).purchases[0]!;
    expect(resent.duplicate).to.equal(false);
    expect(resent.probableResendOf).to.deep.equal([a.documentId]);
    const unrelated = (await receivePurchaseDocument(deps, peppol(other, { as4MessageId: 'msg-4@ap.example' }), ctx())).purchases[0]!;
    expect(unrelated).to.include({ duplicate: false });
    expect(unrelated.probableResendOf).to.deep.equal([]);
  });
});
