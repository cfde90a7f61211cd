/**
 * Every rule set, in evaluation order: the core sets, then each country's. Codes and set
 * names are checked for uniqueness once, when this module loads.
 */
import { isStatic } from '../conditions.js';
import { aePintRuleSets } from './ae-pint.js';
import { aeRuleSets } from './ae.js';
import { beRuleSets } from './be.js';
import { coreRuleSets, DOCUMENT_NUMBER_REUSE } from './core.js';
import { deRuleSets } from './de.js';
import type { RuleSet } from './define.js';
import { myRuleSets } from './my.js';
import { saRuleSets } from './sa.js';

export const ruleSets: readonly RuleSet[] = [...coreRuleSets, ...aeRuleSets, ...aePintRuleSets, ...saRuleSets, ...myRuleSets, ...beRuleSets, ...deRuleSets];

(function checkRegistry() {
  const codes = new Set<string>([DOCUMENT_NUMBER_REUSE.code]);
  const names = new Set<string>();
  for (const set of ruleSets) {
    if (names.has(set.name)) throw new Error(`rule set named twice: ${set.name}`);
    names.add(set.name);
    if (!isStatic(set.when)) throw new Error(`rule set ${set.name}: a selector may only test base, modifiers and variant`);
    for (const rule of set.rules) {
      if (codes.has(rule.code)) throw new Error(`rule code used twice: ${rule.code}`);
      codes.add(rule.code);
    }
  }
})();

export { DOCUMENT_NUMBER_REUSE };
