/**
 * The validation report, stored as `meta.coreValidation` (docs/api/invoice-query.md), and its io-ts codec
 * for events that carry it.
 *
 * Counters (all whole numbers):
 * - `ruleSets`: rule sets selected for the document type; `rules`: rules in them.
 * - Rule outcomes, `rules = passed + failed + warned + skipped`: `failed` rules reported at
 *   least one error, `warned` rules (severity warning) at least one warning, `skipped` rules
 *   did not apply (switched off by the document type, a field condition, nothing to check,
 *   or no document to check).
 * - Findings: `errors` and `warnings` count every finding (preflight included), equal to the
 *   lengths of the lists unless `metadata.truncated`.
 * - Preflight: `preflightChecks` structural checks, `preflightPassed + preflightFailed` of them.
 */
import * as t from 'io-ts';

const PathCodec = t.array(t.union([t.string, t.number]));

export const ValidationFindingCodec = t.intersection(
  [
    t.type({
      code: t.string,
      message: t.string,
      path: PathCodec,
      corePath: t.string,
      severity: t.keyof({ error: null, warning: null }),
      ruleSet: t.string,
    }),
    t.partial({
      payloadPath: t.union([t.string, t.null]),
      /** The official rule (e.g. PINT AE `ibr-174-ae`) the finding's rule enforces, when there is one. */
      officialRule: t.string,
    }),
  ],
  'ValidationFinding',
);

export const RuleSetStatsCodec = t.type(
  {
    name: t.string,
    rules: t.number,
    passed: t.number,
    failed: t.number,
    warned: t.number,
    skipped: t.number,
    errors: t.number,
    warnings: t.number,
  },
  'RuleSetStats',
);

export const ValidationTotalsCodec = t.type(
  {
    ruleSets: t.number,
    rules: t.number,
    passed: t.number,
    failed: t.number,
    warned: t.number,
    skipped: t.number,
    errors: t.number,
    warnings: t.number,
    preflightChecks: t.number,
    preflightPassed: t.number,
    preflightFailed: t.number,
  },
  'ValidationTotals',
);

export const ValidationReportCodec = t.type(
  {
    success: t.boolean,
    errors: t.array(ValidationFindingCodec),
    warnings: t.array(ValidationFindingCodec),
    metadata: t.type({
      country: t.union([t.string, t.null]),
      base: t.union([t.string, t.null]),
      modifiers: t.array(t.string),
      variant: t.union([t.string, t.null]),
      durationMs: t.number,
      truncated: t.boolean,
      totals: ValidationTotalsCodec,
      ruleSetStats: t.array(RuleSetStatsCodec),
    }),
    validatedAt: t.string,
  },
  'ValidationReport',
);

export type ValidationFinding = t.TypeOf<typeof ValidationFindingCodec>;
export type RuleSetStats = t.TypeOf<typeof RuleSetStatsCodec>;
export type ValidationTotals = t.TypeOf<typeof ValidationTotalsCodec>;
export type ValidationReport = t.TypeOf<typeof ValidationReportCodec>;
