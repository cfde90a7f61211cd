/** Runs a corpus case through the service's own steps: validation, then the XML the delivery sends. */
import { generateInvoiceXml, generateTaxDataDocument, type CoreDocument } from '../../domain/artifacts/index.js';
import { applyTemplate, identityTemplate, validateDocument, type ValidationReport } from '../../domain/validation/index.js';
import type { CorpusCase } from './corpus.js';

export const CORPUS_NOW = new Date('2026-01-15T09:30:15.000Z');
export const CORPUS_UUID = '3cf5ee18-ee25-44ea-a444-2c37ba7f28be';

export function corpusReport(c: CorpusCase): ValidationReport {
  const { document, pathMap, problems } = applyTemplate(identityTemplate, c.document);
  return validateDocument({ country: c.country, documentType: c.documentType, document, now: CORPUS_NOW, pathMap, mappingProblems: problems });
}

export function corpusVerdict(c: CorpusCase): { accepted: boolean; matches: boolean; summary: string; report: ValidationReport } {
  const report = corpusReport(c);
  const accepted = report.success;
  const codes = report.errors.map((e) => `${e.code}${e.officialRule ? `[${e.officialRule}]` : ''}`);
  const summary = accepted ? 'accepted' : `refused ${codes.join(', ')}`;
  let matches: boolean;
  if (c.expect.verdict === 'accepted') matches = accepted && (c.expect.warns ?? []).every((code) => report.warnings.some((w) => w.code === code));
  else {
    const want = c.expect;
    matches = !accepted && report.errors.some((e) => e.code === want.code && (want.official === undefined || e.officialRule === want.official));
  }
  return { accepted, matches, summary, report };
}

/** The e-invoice XML as the delivery step writes it (the submission time as the issue time). */
export function corpusXml(c: CorpusCase): string {
  return generateInvoiceXml({
    country: c.country,
    documentType: c.documentType,
    document: c.document as CoreDocument,
    uuid: CORPUS_UUID,
    issueTimestamp: CORPUS_NOW.toISOString(),
  }).xml;
}

/** The folder (rule group) of the official artefacts that judge a case's XML; undefined for Malaysia. */
export function ruleGroup(c: CorpusCase): string | undefined {
  if (c.country === 'MY') return undefined;
  const sb = (c.documentType.modifiers ?? []).includes('self_billed');
  if (c.country === 'SA') return 'SA';
  return sb ? `${c.country}-SB` : c.country;
}

/** The UAE Tax Data Document of an AE case, around the XML the delivery step sends (`xml`). */
export function corpusTdd(c: CorpusCase, xml: string): string {
  return generateTaxDataDocument({
    documentType: c.documentType,
    document: c.document as CoreDocument,
    uuid: CORPUS_UUID,
    reportedAt: CORPUS_NOW.toISOString(),
    transportHeaderId: `${CORPUS_UUID}-sbdh`,
    sourceXml: xml,
  }).xml;
}
