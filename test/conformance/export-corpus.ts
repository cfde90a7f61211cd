/**
 * Writes the XML of every `accepted` corpus case into a folder per rule group, for a run of the
 * official validation artefacts (test/conformance/check-official.sh). Prints each case whose
 * verdict differs from the expected one and exits 1 if there is any.
 *
 *   node --import tsx test/conformance/export-corpus.ts <out-dir>
 *
 * Folders: AE (PINT AE billing), AE-SB (PINT AE self-billing), BE and DE (Peppol BIS Billing 3.0;
 * DE also XRechnung 3.0.2), BE-SB and DE-SB (Peppol BIS self-billing), SA (ZATCA). Malaysia has
 * no public Schematron and is not written. Saudi documents are written stamped, as delivery stamps
 * them for a seller with an EGS unit (a key and certificate of a local test CA).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { conformanceCorpus } from './corpus.js';
import { corpusVerdict, corpusXml, ruleGroup } from './run-case.js';
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
  if (c.expect.verdict !== 'accepted' || !verdict.accepted) continue;
  const group = ruleGroup(c);
  if (!group) continue;
  mkdirSync(join(out, group), { recursive: true });
  writeFileSync(join(out, group, `${c.name}.xml`), group === 'SA' ? stampSaudi(corpusXml(c)) : corpusXml(c));
  counts[group] = (counts[group] ?? 0) + 1;
}
console.log(JSON.stringify({ written: counts, mismatches }));
process.exit(mismatches === 0 ? 0 : 1);
