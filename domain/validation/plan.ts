/**
 * Rule selection, compiled once per document-type key (country, base, modifiers, variant):
 * which rule sets apply, which of their rules the document type switches off (counted as
 * skipped), and the field conditions left to evaluate per document. Both the validator and
 * the requirements catalogue read the same plan.
 */
import { specialise, type DataCondition, type Specialised } from './conditions.js';
import type { Country, ResolvedDocumentType } from './document-types.js';
import { EACH, parsePath, type PathSegment } from './paths.js';
import type { Rule, RuleSet } from './rules/define.js';
import { ruleSets } from './rules/index.js';

/** A rule with its paths parsed, prepared once at module load. */
export interface PreparedRule {
  readonly rule: Rule;
  readonly ruleSet: RuleSet;
  /** required: [path, ...alternatives]; format: paths; check: paths (may contain `[]`). */
  readonly paths: readonly string[];
  readonly segments: readonly (readonly PathSegment[])[];
}

export interface PlannedRule {
  readonly prepared: PreparedRule;
  /** Index of the rule's set in `Plan.sets`. */
  readonly setIndex: number;
  /** Document-type part decided, field part left (null: always applies). */
  readonly data: DataCondition | null;
  readonly specialised: Specialised;
}

export interface PlannedSet {
  readonly name: string;
  readonly rules: number;
  /** Rules the document type switches off: always counted as skipped. */
  readonly skippedByType: number;
}

export interface Plan {
  readonly key: string;
  readonly country: Country;
  readonly documentType: ResolvedDocumentType;
  readonly sets: readonly PlannedSet[];
  /** Rules to evaluate, in order. */
  readonly active: readonly PlannedRule[];
  /** Rules of the selected sets that the document type switches off. */
  readonly inactive: readonly PlannedRule[];
  readonly ruleCount: number;
}

const prepared = new Map<Rule, PreparedRule>();
for (const set of ruleSets) {
  for (const rule of set.rules) {
    const paths = rule.kind === 'required' ? [rule.path, ...(rule.alternatives ?? [])] : rule.paths;
    const segments = paths.map(parsePath);
    if (rule.kind !== 'check' && segments.some((s) => s.includes(EACH))) {
      throw new Error(`rule ${rule.code}: only check rules may use [] paths`);
    }
    prepared.set(rule, { rule, ruleSet: set, paths, segments });
  }
}

export function preparedRule(rule: Rule): PreparedRule {
  return prepared.get(rule)!;
}

export function planKey(country: string, dt: ResolvedDocumentType): string {
  const mods = dt.modifiers.length > 1 ? [...dt.modifiers].sort().join(',') : (dt.modifiers[0] ?? '');
  return `${country}|${dt.base}|${dt.variant ?? ''}|${mods}`;
}

const MAX_CACHED_PLANS = 4096;
const plans = new Map<string, Plan>();

/** The plan of a checked document type (see `checkDocumentType`), compiled on first use. */
export function planFor(country: Country, dt: ResolvedDocumentType): Plan {
  const key = planKey(country, dt);
  let plan = plans.get(key);
  if (!plan) {
    plan = compile(key, country, dt);
    if (plans.size >= MAX_CACHED_PLANS) plans.clear();
    plans.set(key, plan);
  }
  return plan;
}

function compile(key: string, country: Country, dt: ResolvedDocumentType): Plan {
  const documentType: ResolvedDocumentType = { base: dt.base, modifiers: [...dt.modifiers].sort(), variant: dt.variant };
  const sets: PlannedSet[] = [];
  const active: PlannedRule[] = [];
  const inactive: PlannedRule[] = [];
  let ruleCount = 0;
  for (const set of ruleSets) {
    if (!set.countries.includes(country)) continue;
    if (specialise(set.when, documentType).decided !== true) continue;
    const setIndex = sets.length;
    let skippedByType = 0;
    for (const rule of set.rules) {
      const s = specialise(rule.when, documentType);
      const planned: PlannedRule = { prepared: prepared.get(rule)!, setIndex, data: s.data, specialised: s };
      if (s.decided === false) {
        skippedByType++;
        inactive.push(planned);
      } else {
        active.push(planned);
      }
    }
    ruleCount += set.rules.length;
    sets.push({ name: set.name, rules: set.rules.length, skippedByType });
  }
  return { key, country, documentType, sets, active, inactive, ruleCount };
}
