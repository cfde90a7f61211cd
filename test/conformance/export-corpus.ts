/**
 * Writes the XML of every `accepted` corpus case into a folder per rule group, for a run of the
 * official validation artefacts (test/conformance/check-official.sh). Prints each case whose
 * verdict differs from the expected one and exits 1 if there is any.
 *
 *   node --import tsx test/conformance/export-corpus.ts <out-dir>
 *
 * Folders: AE (PINT AE billing), AE-SB (PINT AE self-billing), BE and DE (Peppol BIS Billing 3.0;
 * DE also XRechnung 3.0.2), BE-SB and DE-SB (Peppol BIS self-billing), SA (ZATCA). Malaysia has
 * no public Schematron and is not written.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { conformanceCorpus } from './corpus.js';
import { corpusVerdict, corpusXml, ruleGroup } from './run-case.js';

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
  writeFileSync(join(out, group, `${c.name}.xml`), corpusXml(c));
  counts[group] = (counts[group] ?? 0) + 1;
}
console.log(JSON.stringify({ written: counts, mismatches }));
process.exit(mismatches === 0 ? 0 : 1);
