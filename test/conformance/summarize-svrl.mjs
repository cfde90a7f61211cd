// Summarises a folder of SVRL reports: documents passed (no fatal or error assert) and the failed
// asserts by flag and rule id. Exits 1 when a document has a fatal or error assert other than the
// known ones (rule ids the project does not meet by design, listed in docs/conformance.md).
// usage: node summarize-svrl.mjs <group> <artefact> <svrl-dir> [known-id,...]   (VERBOSE=1 lists each document)
import { readdirSync, readFileSync } from 'node:fs';
const [group, artefact, dir, knownList = ''] = process.argv.slice(2);
const known = new Set(knownList.split(',').filter(Boolean));
const byRule = {};
let documents = 0;
let failed = 0;
for (const file of readdirSync(dir).sort()) {
  const svrl = readFileSync(`${dir}/${file}`, 'utf8');
  documents++;
  const asserts = [...svrl.matchAll(/<svrl:failed-assert\b([^>]*)>([\s\S]*?)<\/svrl:failed-assert>/g)].map((m) => ({
    id: /\bid="([^"]*)"/.exec(m[1])?.[1] ?? '?',
    flag: /\bflag="([^"]*)"/.exec(m[1])?.[1] ?? 'fatal',
    text: (/<svrl:text>([\s\S]*?)<\/svrl:text>/.exec(m[2])?.[1] ?? '').replace(/\s+/g, ' ').slice(0, 200),
  }));
  if (asserts.some((a) => (a.flag === 'fatal' || a.flag === 'error') && !known.has(a.id))) failed++;
  for (const a of asserts) byRule[`${a.flag} ${a.id}`] = (byRule[`${a.flag} ${a.id}`] ?? 0) + 1;
  if (process.env.VERBOSE && asserts.length) console.log(`  ${file}: ${asserts.map((a) => `${a.flag} ${a.id}${process.env.VERBOSE === '2' ? ` ${a.text}` : ''}`).join(' | ')}`);
}
console.log(JSON.stringify({ group, artefact, documents, passed: documents - failed, failedAsserts: byRule, ...(known.size ? { knownByDesign: [...known] } : {}) }));
process.exit(failed === 0 ? 0 : 1);
