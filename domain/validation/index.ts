/**
 * The validation engine (issue 5 item 4): pure domain code, no I/O, no clock.
 *
 *   const { document, pathMap, problems } = applyTemplate(identityTemplate, payload);
 *   const report = validateDocument({ country, documentType, document, now, pathMap, mappingProblems: problems });
 *   // report is meta.coreValidation (docs/api/invoice-query.md); report.errors[i].payloadPath names the caller's field
 *
 * - `supportedCountries`, `checkDocumentType`, `resolveLogicalDocumentType`, `derivedFlags`:
 *   document types per country and the 14 flags of docs/api/unify.md.
 * - `validateDocument`: preflight and the rule sets of the document type, into the report.
 * - `requirementsCatalogue`: required / conditional / optional per core path, generated from
 *   the same rule sets; `describeRules`: every rule code.
 * - `applyTemplate`, `identityTemplate`, `payloadPathFor`, `templateProblems`: mapping templates.
 * - `documentNumberReuseFinding`: the CORE-HEAD-010 finding the command layer reports.
 * - `sampleDocument`: a valid realistic document per country (tests, benchmarks, docs).
 */
export {
  supportedCountries,
  isSupportedCountry,
  countryDocumentTypes,
  DOCUMENT_BASES,
  DOCUMENT_MODIFIERS,
  DOCUMENT_VARIANTS,
  LOGICAL_DOCUMENT_TYPES,
  checkDocumentType,
  resolveLogicalDocumentType,
  derivedFlags,
  DocumentTypeError,
  type Country,
  type DocumentBase,
  type DocumentModifier,
  type DocumentVariant,
  type DocumentTypeInput,
  type ResolvedDocumentType,
  type DerivedFlags,
  type DocumentTypeErrorReason,
  type Result,
} from './document-types.js';
export { validateDocument, documentNumberReuseFinding, PREFLIGHT_CODES, type ValidateDocumentInput } from './validate.js';
export {
  ValidationReportCodec,
  ValidationFindingCodec,
  type ValidationReport,
  type ValidationFinding,
  type ValidationTotals,
  type RuleSetStats,
} from './report.js';
export {
  requirementsCatalogue,
  describeRules,
  type CatalogueQuery,
  type RequirementsCatalogue,
  type FieldRequirement,
  type FieldConstraint,
  type Requirement,
  type RuleDescription,
} from './catalogue.js';
export {
  applyTemplate,
  identityTemplate,
  builtInTemplates,
  IDENTITY_TEMPLATE_ID,
  CORE_SECTIONS,
  MappingTemplateCodec,
  payloadPathFor,
  templateProblems,
  type MappingTemplate,
  type TemplateEntry,
  type PathMap,
  type MappingProblem,
  type AppliedTemplate,
} from './templates.js';
export { DOCUMENT_NUMBER_REUSE } from './rules/core.js';
export { EMIRATE_CODES, INVOICE_FREQUENCIES } from './formats.js';
export { formatPath, parsePath, type PathSegment } from './paths.js';
export { sampleDocument, type SampleOptions } from './samples.js';
export type { Severity } from './rules/define.js';
