// Checks that the official artefacts refuse each refused corpus case with the rule the service
// names: for every <name>.expect in <xml-dir>, one of the SVRL reports <svrl-dir>/<artefact>/<name>.xml
// has a failed assert with that id. Prints one line per group; exits 1 on a disagreement.
// Cases listed in [known-case,...] disagree on purpose (docs/conformance.md says why): reported, not failed.
// usage: node check-refused.mjs <group> <xml-dir> <svrl-dir> [known-case,...]
import { existsSync, readdirSync, readFileSync } from 'node:fs';
const [group, xmlDir, svrlDir, knownList = ''] = process.argv.slice(2);
const known = new Set(knownList.split(',').filter(Boolean));
const knownDisagreements = [];
const artefacts = readdirSync(svrlDir);
let agreed = 0;
const disagreements = [];
for (const file of readdirSync(xmlDir).filter((f) => f.endsWith('.expect')).sort()) {
  const name = file.slice(0, -'.expect'.length);
  const want = readFileSync(`${xmlDir}/${file}`, 'utf8').trim();
  const failed = new Set();
  for (const a of artefacts) {
    const path = `${svrlDir}/${a}/${name}.xml`;
    if (!existsSync(path)) continue;
    for (const m of readFileSync(path, 'utf8').matchAll(/<svrl:failed-assert\b[^>]*\bid="([^"]*)"/g)) failed.add(m[1]);
  }
  if (failed.has(want)) agreed++;
  else if (known.has(name)) knownDisagreements.push(`${name}: ${want}`);
  else disagreements.push(`${name}: the service names ${want}, the official rules report ${[...failed].join(', ') || 'nothing'}`);
}
console.log(JSON.stringify({ group, refused: agreed + disagreements.length + knownDisagreements.length, officialRulesAgree: agreed, disagreements, ...(known.size ? { knownDisagreements } : {}) }));
process.exit(disagreements.length === 0 ? 0 : 1);
