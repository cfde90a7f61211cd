/**
 * Writes the XML of every `accepted` corpus case into a folder per rule group, for a run of the
 * official validation artefacts (test/conformance/check-official.sh). Prints each case whose
 * verdict differs from the expected one and exits 1 if there is any.
 *
 *   node --import tsx test/conformance/export-corpus.ts <out-dir>
 *
 * Folders: AE (PINT AE billing), AE-SB (PINT AE self-billing), BE and DE (Peppol BIS Billing 3.0;
 * DE also XRechnung 3.0.2), BE-SB and DE-SB (Peppol BIS self-billing), SA (ZATCA), TDD (the UAE
 * Tax Data Document of every accepted AE case, for the AE TDD rules). Malaysia has
 * no public Schematron and is not written. Saudi documents are written stamped, as delivery stamps
 * them for a seller with an EGS unit (a key and certificate of a local test CA). Each refused case
 * that names an official rule is written too, under refused/<group>/ with a `.expect` file holding
 * that rule id: the XML the payload would give if the service did not refuse it, which the official
 * artefacts must refuse with that rule.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { conformanceCorpus } from './corpus.js';
import { corpusTdd, corpusVerdict, corpusXml, ruleGroup } from './run-case.js';
import { generateKeyPairSync } from 'node:crypto';
import { buildCsr } from '../../commands/zatca/egs-units.js';
import { stampInvoice } from '../../domain/zatca/stamp.js';
import { openTestCa } from '../zatca/test-ca.js';

/** Stamps a Saudi document with a test EGS key and certificate. */
function saudiStamper(): (xml: string) => string {
  const ca = openTestCa();
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
  const subject = { commonName: 'TST-corpus', serialNumber: '1-Ledger|2-corpus|3-1', organizationUnit: 'Riyadh', organizationName: 'Corpus', country: 'SA' as const, invoiceType: '1100', location: 'Riyadh', industry: 'Retail' };
  const certificate = ca.issue(buildCsr({ environment: 'sandbox', sellerVat: '300000000000003', subject }, privateKey, publicKey.export({ type: 'spki', format: 'pem' }).toString()));
  ca.close();
  return (xml) => stampInvoice(xml, { privateKey, certificate }, new Date()).xml;
}
const stampSaudi = saudiStamper();

const out = process.argv[2];
if (!out) {
  console.error('usage: export-corpus.ts <out-dir>');
  process.exit(2);
}
let mismatches = 0;
const counts: Record<string, number> = {};
for (const c of conformanceCorpus()) {
  const verdict = corpusVerdict(c);
  if (!verdict.matches) {
    mismatches++;
    console.log(`MISMATCH ${c.country} ${c.name}: expected ${JSON.stringify(c.expect)}, got ${verdict.summary}`);
  }
  const group = ruleGroup(c);
  if (!group) continue;
  if (c.expect.verdict === 'refused') {
    // The XML the payload would give without the service's refusal: the official rule it names must refuse it too.
    if (!c.expect.official) continue;
    let xml: string;
    try {
      xml = corpusXml(c);
    } catch (err) {
      console.log(`UNWRITABLE ${c.country} ${c.name}: ${(err as Error).message.split('\n')[0]}`);
      continue;
    }
    mkdirSync(join(out, 'refused', group), { recursive: true });
    writeFileSync(join(out, 'refused', group, `${c.name}.xml`), xml);
    writeFileSync(join(out, 'refused', group, `${c.name}.expect`), c.expect.official);
    counts[`refused/${group}`] = (counts[`refused/${group}`] ?? 0) + 1;
    continue;
  }
  if (!verdict.accepted) continue;
  mkdirSync(join(out, group), { recursive: true });
  const xml = corpusXml(c);
  writeFileSync(join(out, group, `${c.name}.xml`), group === 'SA' ? stampSaudi(xml) : xml);
  counts[group] = (counts[group] ?? 0) + 1;
  if (c.country === 'AE') {
    // The Tax Data Document the access point reports to the FTA for this document (corner 5).
    mkdirSync(join(out, 'TDD'), { recursive: true });
    writeFileSync(join(out, 'TDD', `${c.name}.xml`), corpusTdd(c, xml));
    counts['TDD'] = (counts['TDD'] ?? 0) + 1;
  }
}
console.log(JSON.stringify({ written: counts, mismatches }));
process.exit(mismatches === 0 ? 0 : 1);
