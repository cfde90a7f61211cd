/**
 * `validateDocument`: preflight (structure and types), then the planned rules of the
 * document type, into the report of docs/api/invoice-query.md. Pure: the only outside value it reads is
 * `performance.now()` for `durationMs` when the caller does not pass one; `validatedAt`
 * comes from the `now` it is given.
 */
import { holds } from './conditions.js';
import {
  BASE_ERROR_CODE,
  checkDocumentType,
  COUNTRY_ERROR_CODE,
  type DocumentTypeInput,
  type ResolvedDocumentType,
} from './document-types.js';
import type { Format } from './formats.js';
import { BROKEN, formatPath, isPresent, isRecord, parsePath, valueAt, type PathSegment } from './paths.js';
import { planFor, type Plan, type PlannedRule } from './plan.js';
import type { RuleSetStats, ValidationFinding, ValidationReport } from './report.js';
import { DOCUMENT_NUMBER_REUSE } from './rules/core.js';
import type { CheckContext, Severity } from './rules/define.js';
import { kindOf, preflight, type PreflightSink } from './preflight.js';
import { payloadPathFor, type MappingProblem, type PathMap } from './templates.js';

export interface ValidateDocumentInput {
  /** ISO 3166-1 alpha-2; see `supportedCountries`. */
  readonly country: string;
  readonly documentType: DocumentTypeInput;
  /** The core document (after the mapping template). */
  readonly document: unknown;
  /** Becomes `validatedAt`. */
  readonly now: Date;
  /** Reported as `metadata.durationMs`; measured with `performance.now()` when absent. */
  readonly durationMs?: number;
  /** When given, every finding also names the caller's payload path (`payloadPath`). */
  readonly pathMap?: PathMap;
  /** Problems `applyTemplate` met; reported as preflight errors (CORE-PRE-007). */
  readonly mappingProblems?: readonly MappingProblem[];
  /** Most findings listed per list (errors, warnings); counters still count all. Default 1000. */
  readonly maxFindings?: number;
}

export const PREFLIGHT_RULE_SET = 'core.preflight';
export const PREFLIGHT_CODES = {
  notAnObject: 'CORE-PRE-001',
  wrongType: 'CORE-PRE-002',
  country: COUNTRY_ERROR_CODE,
  base: BASE_ERROR_CODE,
  modifier: 'CORE-PRE-005',
  variant: 'CORE-PRE-006',
  mapping: 'CORE-PRE-007',
} as const;

// One validation run ----------------------------------------------------------------------------

class Run implements CheckContext, PreflightSink {
  readonly errors: ValidationFinding[] = [];
  readonly warnings: ValidationFinding[] = [];
  errorCount = 0;
  warningCount = 0;
  truncated = false;
  preflightChecks = 0;
  preflightFailed = 0;
  documentType: ResolvedDocumentType = { base: 'tax_invoice', modifiers: [], variant: null };
  /** The rule being evaluated and its findings so far. */
  current: PlannedRule | null = null;
  currentSetName = '';
  currentFindings = 0;
  readonly stack: PathSegment[] = [];

  constructor(
    private readonly maxFindings: number,
    private readonly pathMap: PathMap | undefined,
  ) {}

  add(code: string, message: string, path: PathSegment[], severity: Severity, ruleSet: string, payloadPath?: string | null, officialRule?: string): void {
    const list = severity === 'error' ? this.errors : this.warnings;
    if (severity === 'error') this.errorCount++;
    else this.warningCount++;
    if (list.length >= this.maxFindings) {
      this.truncated = true;
      return;
    }
    const text = officialRule && !message.includes(officialRule) ? `${message} [${officialRule}]` : message;
    const finding: ValidationFinding = { code, message: text, path, corePath: formatPath(path), severity, ruleSet };
    if (officialRule) finding.officialRule = officialRule;
    if (payloadPath !== undefined) {
      if (payloadPath !== null || this.pathMap) finding.payloadPath = payloadPath;
    } else if (this.pathMap) {
      finding.payloadPath = payloadPathFor(this.pathMap, path);
    }
    list.push(finding);
  }

  preflightError(code: string, message: string, path: PathSegment[], payloadPath?: string | null): void {
    this.preflightFailed++;
    this.add(code, message, path, 'error', PREFLIGHT_RULE_SET, payloadPath);
  }

  /** CheckContext: a finding of the current rule. */
  report(path: PathSegment[], message?: string): void {
    const rule = this.current!.prepared.rule;
    this.currentFindings++;
    this.add(rule.code, message ?? rule.message, path, rule.severity, this.currentSetName, undefined, rule.official);
  }

  /** PreflightSink: the value at `stack` has the wrong type. */
  typeError(expected: string, value: unknown): void {
    this.preflightError(PREFLIGHT_CODES.wrongType, `${formatPath(this.stack) || 'the document'} must be ${expected}, not ${kindOf(value)}`, this.stack.slice());
  }
}

// Rule evaluation --------------------------------------------------------------------------------

const PASSED = 0;
const FAILED = 1;
const SKIPPED = 2;

function evaluate(run: Run, planned: PlannedRule, doc: Record<string, unknown>): number {
  if (planned.data !== null && !holds(planned.data, doc)) return SKIPPED;
  const { rule, segments } = planned.prepared;
  switch (rule.kind) {
    case 'required': {
      let broken = 0;
      for (let i = 0; i < segments.length; i++) {
        const v = valueAt(doc, segments[i]!);
        if (v === BROKEN) broken++;
        else if (isPresent(v)) return PASSED;
      }
      if (broken === segments.length) return SKIPPED; // preflight already reports the container
      run.report(segments[0]!.slice());
      return FAILED;
    }
    case 'format': {
      const format: Format = rule.format;
      const test = format.test as (v: unknown) => boolean;
      const wantString = format.appliesTo === 'string';
      let checked = 0;
      let failed = false;
      for (let i = 0; i < segments.length; i++) {
        const v = valueAt(doc, segments[i]!);
        if (wantString ? typeof v !== 'string' || !isPresent(v) : typeof v !== 'number' || !Number.isFinite(v)) continue;
        checked++;
        if (!test(v)) {
          run.report(segments[i]!.slice());
          failed = true;
        }
      }
      return checked === 0 ? SKIPPED : failed ? FAILED : PASSED;
    }
    case 'check': {
      run.currentFindings = 0;
      const applied = rule.check(doc, run);
      if (run.currentFindings > 0) return FAILED;
      return applied ? PASSED : SKIPPED;
    }
  }
}

// The report -------------------------------------------------------------------------------------

const now = () => performance.now();

/**
 * Validates a core document for a country and document type; see `ValidationReport`.
 * Malformed input of any kind gives a failed report, never an exception; the one exception
 * is a `now` that is not a valid Date (a programming error of the caller).
 */
export function validateDocument(input: ValidateDocumentInput): ValidationReport {
  const raw = (isRecord(input) ? input : {}) as Partial<ValidateDocumentInput>;
  const started = raw.durationMs === undefined ? now() : 0;
  const maxFindings = typeof raw.maxFindings === 'number' && raw.maxFindings >= 0 ? raw.maxFindings : 1000;
  const run = new Run(maxFindings, raw.pathMap);
  const at = raw.now;
  if (!(at instanceof Date) || Number.isNaN(at.getTime())) throw new TypeError('validateDocument: now must be a valid Date');

  // Document type (request level) ------------------------------------------------------------
  const country = typeof raw.country === 'string' ? raw.country : null;
  const dtInput: unknown = raw.documentType;
  run.preflightChecks++;
  const checked = checkDocumentType(raw.country, dtInput);
  let plan: Plan | null = null;
  if (checked.ok) {
    plan = planFor(raw.country as Parameters<typeof planFor>[0], checked.value);
    run.documentType = plan.documentType;
  } else {
    const e = checked.error;
    const path: PathSegment[] = e.reason === 'unsupported_country' ? ['country'] : ['documentType', ...e.segments];
    run.preflightError(e.code, e.message, path, null);
  }

  // Mapping problems and structure -----------------------------------------------------------
  const problems = Array.isArray(raw.mappingProblems) ? raw.mappingProblems : [];
  for (const p of problems as readonly unknown[]) {
    if (!isRecord(p)) continue;
    run.preflightChecks++;
    run.preflightError(PREFLIGHT_CODES.mapping, String(p['message']), safePath(p['corePath']), typeof p['payloadPath'] === 'string' ? p['payloadPath'] : null);
  }
  const document = raw.document;
  const isObject = isRecord(document);
  if (isObject) {
    preflight(document, run);
  } else {
    run.preflightChecks++;
    run.preflightError(PREFLIGHT_CODES.notAnObject, `the document must be an object, not ${kindOf(document)}`, []);
  }

  // Rules ------------------------------------------------------------------------------------
  let stats: RuleSetStats[] = [];
  let passed = 0;
  let failed = 0;
  let warned = 0;
  let skipped = 0;
  if (plan) {
    const sets: RuleSetStats[] = [];
    for (const s of plan.sets) sets.push({ name: s.name, rules: s.rules, passed: 0, failed: 0, warned: 0, skipped: s.skippedByType, errors: 0, warnings: 0 });
    skipped = plan.ruleCount - plan.active.length;
    const active = plan.active;
    for (let i = 0; i < active.length; i++) {
      const planned = active[i]!;
      const set = sets[planned.setIndex]!;
      let outcome = SKIPPED;
      if (isObject) {
        run.current = planned;
        run.currentSetName = set.name;
        run.currentFindings = 0;
        const errorsBefore = run.errorCount;
        const warningsBefore = run.warningCount;
        outcome = evaluate(run, planned, document);
        set.errors += run.errorCount - errorsBefore;
        set.warnings += run.warningCount - warningsBefore;
      }
      if (outcome === PASSED) {
        passed++;
        set.passed++;
      } else if (outcome === SKIPPED) {
        skipped++;
        set.skipped++;
      } else if (planned.prepared.rule.severity === 'error') {
        failed++;
        set.failed++;
      } else {
        warned++;
        set.warned++;
      }
    }
    run.current = null;
    stats = sets;
  }

  const durationMs = typeof raw.durationMs === 'number' ? raw.durationMs : Math.round((now() - started) * 1000) / 1000;
  const dt = plan?.documentType;
  const echo = dt ? null : echoDocumentType(dtInput);
  return {
    success: run.errorCount === 0,
    errors: run.errors,
    warnings: run.warnings,
    metadata: {
      country,
      base: dt ? dt.base : echo!.base,
      modifiers: dt ? [...dt.modifiers] : echo!.modifiers,
      variant: dt ? dt.variant : echo!.variant,
      durationMs,
      truncated: run.truncated,
      totals: {
        ruleSets: stats.length,
        rules: plan ? plan.ruleCount : 0,
        passed,
        failed,
        warned,
        skipped,
        errors: run.errorCount,
        warnings: run.warningCount,
        preflightChecks: run.preflightChecks,
        preflightPassed: run.preflightChecks - run.preflightFailed,
        preflightFailed: run.preflightFailed,
      },
      ruleSetStats: stats,
    },
    validatedAt: at.toISOString(),
  };
}

/** What the caller sent as document type, for the metadata of a report that could not use it. */
function echoDocumentType(dt: unknown): { base: string | null; modifiers: string[]; variant: string | null } {
  if (!isRecord(dt)) return { base: null, modifiers: [], variant: null };
  const mods = dt['modifiers'];
  return {
    base: typeof dt['base'] === 'string' ? dt['base'] : null,
    modifiers: Array.isArray(mods) ? mods.filter((m): m is string => typeof m === 'string') : [],
    variant: typeof dt['variant'] === 'string' ? dt['variant'] : null,
  };
}

function safePath(corePath: unknown): PathSegment[] {
  if (typeof corePath !== 'string') return [];
  try {
    return parsePath(corePath);
  } catch {
    return [];
  }
}

/**
 * The finding of the document-number reuse rule (CORE-HEAD-010, docs/api/unify.md), for the
 * command layer, which enforces it through the event store.
 */
export function documentNumberReuseFinding(pathMap?: PathMap): ValidationFinding {
  const path: PathSegment[] = [...DOCUMENT_NUMBER_REUSE.path];
  const finding: ValidationFinding = {
    code: DOCUMENT_NUMBER_REUSE.code,
    message: DOCUMENT_NUMBER_REUSE.message,
    path,
    corePath: formatPath(path),
    severity: DOCUMENT_NUMBER_REUSE.severity,
    ruleSet: DOCUMENT_NUMBER_REUSE.ruleSet,
  };
  if (pathMap) finding.payloadPath = payloadPathFor(pathMap, path);
  return finding;
}
