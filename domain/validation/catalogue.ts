/**
 * The field-requirement catalogue (issue 5 item 8), generated from the very plan the
 * validator runs for a document type, and the list of every rule code. Nothing here is a
 * second hand-written list: every requirement, accepted value and format comes from a rule.
 */
import { describeCondition, type Condition } from './conditions.js';
import { checkDocumentType, supportedCountries, type DocumentTypeError, type Result } from './document-types.js';
import { parsePath, shapeOf } from './paths.js';
import { planFor, type PlannedRule } from './plan.js';
import { DOCUMENT_NUMBER_REUSE } from './rules/core.js';
import type { Severity } from './rules/define.js';
import { ruleSets } from './rules/index.js';
import { schemaNodeAt, schemaPaths, typeName } from './schema.js';
import { PREFLIGHT_CODES, PREFLIGHT_RULE_SET } from './validate.js';

export type Requirement = 'required' | 'conditional' | 'optional';

export interface FieldConstraint {
  readonly rule: string;
  /** The official rule it enforces (e.g. PINT AE `ibr-174-ae`), or null. */
  readonly officialRule: string | null;
  readonly severity: Severity;
  readonly kind: 'format' | 'check';
  /** What a valid value looks like. */
  readonly description: string;
  /** Closed code list, when the constraint is one. */
  readonly values: readonly string[] | null;
  /** When the constraint applies (null: whenever the value is given). */
  readonly when: string | null;
}

export interface FieldRequirement {
  /** Core path; `[]` means every element, `[0]` the first. */
  readonly path: string;
  /** `string`, `date`, `code`, `number`, `object`, `array`, … (null for a path outside the shape). */
  readonly type: string | null;
  readonly requirement: Requirement;
  /**
   * For `conditional`: when the field is required (one entry per rule). An object or array
   * holding a required (conditional) field is required (conditional) itself.
   */
  readonly conditions: string[];
  /** Other paths that satisfy the requirement when given instead. */
  readonly alternatives: string[];
  /** Union of the code lists of the constraints, or null. */
  readonly acceptedValues: string[] | null;
  /** Names of the formats the value must have (`date`, `currency`, `AE TRN`, …). */
  readonly formats: string[];
  readonly constraints: FieldConstraint[];
  /** Codes of every rule that checks the path. */
  readonly rules: string[];
  /** The official rules (e.g. PINT AE `ibr-174-ae`) behind those rules. */
  readonly officialRules: string[];
  /** Rules of the selected sets on this path that this document type switches off (e.g. an export exception). */
  readonly notApplicable: { readonly rule: string; readonly appliesWhen: string }[];
}

export interface RequirementsCatalogue {
  readonly country: string;
  readonly base: string;
  readonly modifiers: string[];
  readonly variant: string | null;
  /** The rule sets the validator runs for this document type. */
  readonly ruleSets: string[];
  readonly fields: FieldRequirement[];
}

export interface CatalogueQuery {
  readonly country: string;
  readonly base: string;
  readonly modifiers?: readonly string[];
  readonly variant?: string | null;
}

type MutableField = { -readonly [K in keyof FieldRequirement]: FieldRequirement[K] };

const RANK: Record<Requirement, number> = { optional: 0, conditional: 1, required: 2 };

/**
 * The requirement of every core path for a country and document type: `required`,
 * `conditional` (with the condition in words) or `optional`, accepted values and formats.
 * An unknown or inapplicable document type gives the same typed error the resolver gives.
 */
export function requirementsCatalogue(query: CatalogueQuery): Result<RequirementsCatalogue, DocumentTypeError> {
  const checked = checkDocumentType(query?.country, query && { base: query.base, modifiers: query.modifiers ?? [], variant: query.variant ?? null });
  if (!checked.ok) return checked;
  const plan = planFor(query.country as (typeof supportedCountries)[number], checked.value);

  const bySchema = new Map<string, MutableField>();
  const order: string[] = [];
  for (const { path, node } of schemaPaths()) {
    bySchema.set(path, blank(path, typeName(node)));
    order.push(path);
  }
  const extra = new Map<string, MutableField>();
  const field = (path: string): MutableField => {
    const existing = bySchema.get(path) ?? extra.get(path);
    if (existing) return existing;
    const node = schemaNodeAt(shapeOf(parsePath(path)));
    const created = blank(path, node ? typeName(node) : null);
    extra.set(path, created);
    return created;
  };

  for (const planned of plan.active) apply(planned, field);
  for (const planned of plan.inactive) {
    const { rule, paths } = planned.prepared;
    const appliesWhen = rule.when ? describeCondition(rule.when) : 'always';
    for (const path of rule.kind === 'required' ? paths.slice(0, 1) : paths) field(path).notApplicable.push({ rule: rule.code, appliesWhen });
  }

  // A container holding a required (conditional) field is itself required (conditional).
  const all = [...bySchema.values(), ...extra.values()];
  for (const f of all) {
    if (f.requirement === 'optional') continue;
    for (const container of all) {
      if (container === f || !(f.path.startsWith(`${container.path}.`) || f.path.startsWith(`${container.path}[`))) continue;
      raise(container, f.requirement);
      if (f.requirement === 'conditional') for (const c of f.conditions) if (!container.conditions.includes(c)) container.conditions.push(c);
    }
  }
  for (const f of all) if (f.requirement === 'required') f.conditions.length = 0;

  const fields: FieldRequirement[] = [];
  const placed = new Set<string>();
  const extrasByShape = new Map<string, MutableField[]>();
  for (const f of extra.values()) {
    const shape = shapeOf(parsePath(f.path));
    extrasByShape.set(shape, [...(extrasByShape.get(shape) ?? []), f]);
  }
  for (const path of order) {
    fields.push(bySchema.get(path)!);
    for (const f of extrasByShape.get(path) ?? []) {
      fields.push(f);
      placed.add(f.path);
    }
  }
  for (const f of extra.values()) if (!placed.has(f.path)) fields.push(f);

  return {
    ok: true,
    value: {
      country: plan.country,
      base: plan.documentType.base,
      modifiers: [...checked.value.modifiers],
      variant: plan.documentType.variant,
      ruleSets: plan.sets.map((s) => s.name),
      fields,
    },
  };
}

function blank(path: string, type: string | null): MutableField {
  return { path, type, requirement: 'optional', conditions: [], alternatives: [], acceptedValues: null, formats: [], constraints: [], rules: [], officialRules: [], notApplicable: [] };
}

function raise(f: MutableField, to: Requirement): void {
  if (RANK[to] > RANK[f.requirement]) f.requirement = to;
}

function addRule(f: MutableField, code: string, official?: string): void {
  if (!f.rules.includes(code)) f.rules.push(code);
  if (official && !f.officialRules.includes(official)) f.officialRules.push(official);
}

function apply(planned: PlannedRule, field: (path: string) => MutableField): void {
  const { rule, paths } = planned.prepared;
  const remainder: Condition | null = planned.specialised.remainder;
  const when = remainder ? describeCondition(remainder) : null;
  switch (rule.kind) {
    case 'required': {
      const [main, ...alternatives] = paths as [string, ...string[]];
      const f = field(main);
      addRule(f, rule.code, rule.official);
      if (rule.severity === 'error') {
        if (when === null) raise(f, 'required');
        else {
          raise(f, 'conditional');
          f.conditions.push(`required when ${when}`);
        }
      }
      for (const alt of alternatives) {
        if (!f.alternatives.includes(alt)) f.alternatives.push(alt);
        const a = field(alt);
        addRule(a, rule.code, rule.official);
        if (!a.alternatives.includes(main)) a.alternatives.push(main);
        raise(a, 'conditional');
        a.conditions.push(`required when ${main} is absent${when ? ` and ${when}` : ''}`);
      }
      return;
    }
    case 'format': {
      for (const path of paths) {
        const f = field(path);
        addRule(f, rule.code, rule.official);
        const values = rule.format.values ?? null;
        f.constraints.push({ rule: rule.code, officialRule: rule.official ?? null, severity: rule.severity, kind: 'format', description: rule.format.description, values, when });
        if (!f.formats.includes(rule.format.name)) f.formats.push(rule.format.name);
        if (values) f.acceptedValues = [...new Set([...(f.acceptedValues ?? []), ...values])];
      }
      return;
    }
    case 'check': {
      for (const path of paths) {
        const f = field(path);
        addRule(f, rule.code, rule.official);
        if (rule.requires && rule.severity === 'error') {
          if (rule.requires === 'always' && when === null) raise(f, 'required');
          else {
            raise(f, 'conditional');
            const parts = [rule.requires === 'always' ? null : rule.requires, when].filter((x): x is string => x !== null);
            f.conditions.push(`required when ${parts.join(' and ')}`);
          }
        }
        f.constraints.push({ rule: rule.code, officialRule: rule.official ?? null, severity: rule.severity, kind: 'check', description: rule.constraint, values: null, when });
      }
      return;
    }
  }
}

// Rule listing -----------------------------------------------------------------------------------

export interface RuleDescription {
  readonly code: string;
  /** The official rule it enforces (e.g. PINT AE `ibr-174-ae`), or null. */
  readonly officialRule: string | null;
  readonly ruleSet: string;
  readonly countries: readonly string[];
  readonly severity: Severity;
  readonly kind: 'required' | 'format' | 'check' | 'preflight' | 'command';
  readonly message: string;
  readonly paths: readonly string[];
  /** When the rule applies, in words (rule set selector and rule condition); null: always. */
  readonly appliesWhen: string | null;
}

const PREFLIGHT_MESSAGES: Record<keyof typeof PREFLIGHT_CODES, string> = {
  notAnObject: 'The document must be an object',
  wrongType: 'A value has the wrong type for its core path',
  country: 'The country is not supported',
  base: 'documentType.base is missing, unknown or not accepted for the country',
  modifier: 'A modifier is unknown or not accepted for the country',
  variant: 'The variant is unknown or not accepted for the country',
  mapping: 'The mapping template could not read the payload (a container has the wrong type)',
};

/** Every rule code: preflight, the rule sets (optionally of one country), and CORE-HEAD-010. */
export function describeRules(country?: string): RuleDescription[] {
  const out: RuleDescription[] = [];
  for (const [key, code] of Object.entries(PREFLIGHT_CODES) as [keyof typeof PREFLIGHT_CODES, string][]) {
    out.push({ code, officialRule: null, ruleSet: PREFLIGHT_RULE_SET, countries: supportedCountries, severity: 'error', kind: 'preflight', message: PREFLIGHT_MESSAGES[key], paths: [], appliesWhen: null });
  }
  for (const set of ruleSets) {
    if (country !== undefined && !set.countries.includes(country as never)) continue;
    for (const rule of set.rules) {
      const parts = [set.when, rule.when].filter((c): c is Condition => c !== undefined).map(describeCondition);
      out.push({
        code: rule.code,
        officialRule: rule.official ?? null,
        ruleSet: set.name,
        countries: set.countries,
        severity: rule.severity,
        kind: rule.kind,
        message: rule.message,
        paths: rule.kind === 'required' ? [rule.path, ...(rule.alternatives ?? [])] : rule.paths,
        appliesWhen: parts.length ? parts.join(' and ') : null,
      });
    }
  }
  out.push({
    code: DOCUMENT_NUMBER_REUSE.code,
    officialRule: null,
    ruleSet: DOCUMENT_NUMBER_REUSE.ruleSet,
    countries: supportedCountries,
    severity: 'error',
    kind: 'command',
    message: DOCUMENT_NUMBER_REUSE.message,
    paths: ['header.documentNumber'],
    appliesWhen: 'the number belongs to a live document or one that ended final_invalid (enforced by the command layer)',
  });
  return out;
}
