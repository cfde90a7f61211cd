/**
 * A received payload is parsed once for the purchases import's checks and for its Peppol
 * identifiers: the identifiers read from the import's parse (`ublRoutingValuesOf`, taken only for
 * a document the UBL 2.1 schemas accept) must be exactly `peppolIdentifiersOf`'s, and the SBDH's
 * answers must not change with it.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { invoiceXml } from '../purchases/support.js';
import { peppolIdentifiersFrom, peppolIdentifiersOf, type PeppolIdentifiers } from '../../domain/peppol/identifiers.js';
import { buildSbdh, parseSbd, SbdhError } from '../../domain/peppol/sbdh.js';
import { checkReceivedDocument, ImportRefused, type CheckedDocument } from '../../commands/purchases/check.js';

const MAX = 10 * 1024 * 1024;

/** `peppolIdentifiersOf`'s answer, or its error's code and message. */
function byText(bytes: Uint8Array): PeppolIdentifiers | string {
  try {
    return peppolIdentifiersOf(bytes);
  } catch (err) {
    return `${(err as { code?: string }).code}: ${(err as Error).message}`;
  }
}
function byTree(checked: CheckedDocument): PeppolIdentifiers | string | null {
  if (!checked.routing) return null;
  try {
    return peppolIdentifiersFrom(checked.routing);
  } catch (err) {
    return `${(err as { code?: string }).code}: ${(err as Error).message}`;
  }
}
async function checked(xml: string | Uint8Array): Promise<CheckedDocument | ImportRefused> {
  try {
    return await checkReceivedDocument(typeof xml === 'string' ? Buffer.from(xml) : xml, MAX);
  } catch (err) {
    if (err instanceof ImportRefused) return err;
    throw err;
  }
}

describe('Peppol: the payload read once (import checks and identifiers)', () => {
  const documents: [string, Buffer][] = [];
  for (const country of ['AE', 'BE', 'DE'] as const) {
    for (const base of ['tax_invoice', 'credit_note'] as const) {
      documents.push([`${country} ${base}`, Buffer.from(invoiceXml({ number: `ONCE-${country}-${base}`, buyerTin: '1000000001', sellerTin: '1000000002', lines: 3, country, base }))]);
    }
  }
  const corpus = path.join(import.meta.dirname, '../purchases/corpus');
  for (const file of fs.readdirSync(corpus).filter((f) => f.endsWith('.xml'))) documents.push([`corpus ${file}`, fs.readFileSync(path.join(corpus, file))]);
  const ae = documents[0]![1].toString('utf8');
  // Variations on what the identifiers are read from: white space, comments and character references in the texts, prefixes, an empty schemeID, no endpoint.
  const edited: [string, Buffer][] = ([
    ['padded texts and a comment inside', ae.replace(/<cbc:CustomizationID>([^<]*)</, '<cbc:CustomizationID>\n  $1<!-- c -->\n<').replace(/(<cbc:EndpointID[^>]*>)([^<]*)</g, '$1 $2 <')],
    ['a character reference in the ProfileID', ae.replace(/<cbc:ProfileID>urn/, '<cbc:ProfileID>&#117;rn')],
    ['other prefixes', ae.replaceAll('cbc:', 'b:').replaceAll('xmlns:cbc=', 'xmlns:b=')],
    ['an empty schemeID', ae.replace(/(<cbc:EndpointID) schemeID="[^"]*"/, '$1 schemeID=""')],
    ['no schemeID', ae.replace(/(<cbc:EndpointID) schemeID="[^"]*"/, '$1')],
    ['an empty buyer endpoint', ae.replace(/(<cac:AccountingCustomerParty>\s*<cac:Party>\s*<cbc:EndpointID[^>]*>)[^<]*</, '$1<')],
    ['no CustomizationID', ae.replace(/<cbc:CustomizationID>[^<]*<\/cbc:CustomizationID>/, '')],
    ['a lower-case seller country', ae.replace(/(<cac:AccountingSupplierParty>[\s\S]*?<cbc:IdentificationCode>)([A-Z]{2})/, (_, a: string, c: string) => a + c.toLowerCase())],
  ] as [string, string][]).map(([name, xml]) => [name, Buffer.from(xml)]);

  it('reads the same identifiers from the import\'s parse as peppolIdentifiersOf, for every document the import accepts', async () => {
    let compared = 0;
    for (const [name, bytes] of [...documents, ...edited]) {
      const result = await checked(bytes);
      if (result instanceof ImportRefused) continue;
      const fromTree = byTree(result);
      if (fromTree === null) {
        // Only where peppolIdentifiersOf would not read it either.
        expect(byText(bytes), name).to.match(/^PEPPOL_DOCUMENT_NOT_UBL: the document declares a DOCTYPE/);
        continue;
      }
      expect(fromTree, name).to.deep.equal(byText(bytes));
      compared++;
    }
    expect(compared).to.be.greaterThan(documents.length / 2);
  });

  it('takes no identifiers from a parse where a text came as CDATA (peppolIdentifiersOf does not read CDATA)', async () => {
    const xml = ae.replace(/<cbc:ProfileID>([^<]*)</, '<cbc:ProfileID><![CDATA[$1]]><');
    const result = await checked(xml);
    expect(result).to.not.be.instanceOf(ImportRefused);
    expect((result as CheckedDocument).routing).to.equal(null);
    expect(byText(Buffer.from(xml))).to.match(/^PEPPOL_PROFILE_MISSING/);
  });

  it('refuses a schemeID in another namespace on an endpoint (so the tree never reads one as the schemeID)', async () => {
    const xml = ae.replace(/(<cbc:EndpointID) schemeID="([^"]*)"/, '$1 xmlns:o="urn:other" o:schemeID="$2"');
    expect(xml).to.not.equal(ae);
    const result = await checked(xml);
    expect(result).to.be.instanceOf(ImportRefused);
    expect((result as ImportRefused).code).to.equal('XML_SCHEMA_INVALID');
  });

  it('parseSbd gives the same answer whether the payload is read by peppolIdentifiersOf or by the import\'s parse', async () => {
    const ids = peppolIdentifiersOf(ae);
    const sbd = buildSbdh(ae, ids, { instanceId: 'once-1', createdAt: new Date('2026-01-02T03:04:05Z'), countryC1: 'AE' });
    const result = await checked(Buffer.from(sbd.slice(sbd.indexOf('<Invoice'), sbd.lastIndexOf('</StandardBusinessDocument>'))));
    expect(result).to.not.be.instanceOf(ImportRefused);
    let offered: Buffer | null = null;
    const plain = parseSbd(Buffer.from(sbd));
    const once = parseSbd(Buffer.from(sbd), (payload) => {
      offered = payload;
      return peppolIdentifiersFrom((result as CheckedDocument).routing!);
    });
    expect(once.payloadIds).to.deep.equal(plain.payloadIds);
    expect(once.facts).to.deep.equal(plain.facts);
    expect(once.payload).to.equal(offered);
    expect(once.payload.equals(plain.payload)).to.equal(true);
    // A mismatch is found the same way either way.
    const wrong = sbd.replace(`>${ids.receiver.value}</Identifier></Receiver>`, '>0235:9999999999</Identifier></Receiver>');
    const err = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e;
      }
      return null;
    };
    const a = err(() => parseSbd(Buffer.from(wrong))) as SbdhError;
    const b = err(() => parseSbd(Buffer.from(wrong), () => peppolIdentifiersFrom((result as CheckedDocument).routing!))) as SbdhError;
    expect(a).to.be.instanceOf(SbdhError);
    expect([b.code, b.message]).to.deep.equal([a.code, a.message]);
  });
});
