/** Shared helpers of the validation-engine tests (no database needed). */
import { expect } from 'chai';
import { isRight } from 'fp-ts/lib/Either.js';
import {
  parsePath,
  sampleDocument,
  validateDocument,
  ValidationReportCodec,
  type Country,
  type DocumentTypeInput,
  type PathSegment,
  type ValidationReport,
} from '../../domain/validation/index.js';

export const NOW = new Date('2026-01-15T10:00:00.000Z');

export type Doc = Record<string, any>;

export function dt(base: string, modifiers: string[] = [], variant?: string): DocumentTypeInput {
  return variant === undefined ? { base, modifiers } : { base, modifiers, variant };
}

/** A valid sample for the document type, changed by `mutate`. */
export function docFor(country: Country, documentType: DocumentTypeInput, mutate?: (d: Doc) => void): Doc {
  const d = sampleDocument(country, { documentType, lines: 3 }) as Doc;
  mutate?.(d);
  return d;
}

export function validate(country: string, documentType: unknown, document: unknown): ValidationReport {
  const report = validateDocument({ country, documentType: documentType as DocumentTypeInput, document, now: NOW });
  assertConsistent(report);
  return report;
}

export const codes = (findings: readonly { code: string }[]) => findings.map((f) => f.code).sort();

/** Removes the value at a written path (`parties.seller.taxIds[0].type`); no-op when absent. */
export function unset(doc: unknown, path: string): void {
  const segs = parsePath(path);
  let cur: any = doc;
  for (let i = 0; i < segs.length - 1; i++) {
    cur = cur?.[segs[i]!];
    if (cur === undefined || cur === null || typeof cur !== 'object') return;
  }
  const last = segs[segs.length - 1]!;
  if (Array.isArray(cur) && typeof last === 'number') cur.splice(last, 1);
  else if (cur && typeof cur === 'object') delete cur[last];
}

/** Sets the value at a written path, creating objects and arrays on the way. */
export function set(doc: unknown, path: string | PathSegment[], value: unknown): void {
  const segs = typeof path === 'string' ? parsePath(path) : path;
  let cur: any = doc;
  for (let i = 0; i < segs.length - 1; i++) {
    const seg = segs[i]!;
    if (cur[seg] === undefined || cur[seg] === null || typeof cur[seg] !== 'object') cur[seg] = typeof segs[i + 1] === 'number' ? [] : {};
    cur = cur[seg];
  }
  cur[segs[segs.length - 1]!] = value;
}

/** The invariants of every report's counters (see domain/validation/report.ts). */
export function assertConsistent(r: ValidationReport): void {
  const t = r.metadata.totals;
  expect(isRight(ValidationReportCodec.decode(r)), 'report matches its codec').to.equal(true);
  expect(t.rules, 'rules = passed + failed + warned + skipped').to.equal(t.passed + t.failed + t.warned + t.skipped);
  expect(t.ruleSets).to.equal(r.metadata.ruleSetStats.length);
  let rules = 0;
  let ruleErrors = 0;
  let ruleWarnings = 0;
  for (const s of r.metadata.ruleSetStats) {
    expect(s.rules, `${s.name}: rules = passed + failed + warned + skipped`).to.equal(s.passed + s.failed + s.warned + s.skipped);
    rules += s.rules;
    ruleErrors += s.errors;
    ruleWarnings += s.warnings;
  }
  expect(rules).to.equal(t.rules);
  expect(t.preflightChecks).to.equal(t.preflightPassed + t.preflightFailed);
  expect(t.errors, 'errors = rule-set errors + preflight errors').to.equal(ruleErrors + t.preflightFailed);
  expect(t.warnings).to.equal(ruleWarnings);
  if (!r.metadata.truncated) {
    expect(t.errors).to.equal(r.errors.length);
    expect(t.warnings).to.equal(r.warnings.length);
    expect(r.errors.filter((e) => e.ruleSet === 'core.preflight').length).to.equal(t.preflightFailed);
  }
  expect(t.failed).to.be.at.most(t.errors);
  expect(r.success).to.equal(t.errors === 0);
  for (const f of [...r.errors, ...r.warnings]) {
    expect(f.code).to.match(/^[A-Z]{2,4}-[A-Z]+-\d{3}$/);
    expect(f.message).to.be.a('string').and.not.equal('');
    expect(f.path).to.be.an('array');
  }
  for (const f of r.errors) expect(f.severity).to.equal('error');
  for (const f of r.warnings) expect(f.severity).to.equal('warning');
}
