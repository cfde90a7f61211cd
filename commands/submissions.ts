/**
 * Submitting a sales document (both Unify formats): map the payload through the source's
 * template, validate, claim the document number (CORE-HEAD-010, race-free through the event
 * store), produce the e-invoice XML, and record the document as submitted or rejected.
 */
import { createHash, randomUUID } from 'node:crypto';
import { DomainError } from '../domain/errors.js';
import {
  documentDecider,
  documentStream,
  type DocumentErrorItem,
  type DocumentEvent,
} from '../domain/document/document.js';
import { DOCUMENT_NUMBER_REUSED, STALE_CLAIM_FACTS, numberClaimDecider } from '../domain/document/number-claim.js';
import {
  applyTemplate,
  builtInTemplates,
  documentNumberReuseFinding,
  validateDocument,
  type ValidationFinding,
  type ValidationReport,
} from '../domain/validation/index.js';
import type { EventStore, Position } from './eventstore/port.js';
import { WrongExpectedVersionError } from './eventstore/port.js';
import { execute, loadAggregate, type CommandContext } from './execute.js';

export interface SubmissionSource {
  name: string;
  version: string;
  companyId: string | null;
  templateId: string;
}

export interface SubmissionInput {
  workspaceId: string;
  environment: string;
  country: string;
  documentType: { base: string; modifiers: string[]; variant: string | null };
  source: SubmissionSource;
  payload: unknown;
  format: 'new' | 'earlier';
  externalId: string | null;
  destinations: string[];
}

/** Produces the e-invoice XML of a valid document (base64), or null where none is produced at submission. */
export type XmlProducer = (input: { country: string; documentType: SubmissionInput['documentType']; document: unknown; uuid: string }) => string | null;

export interface SubmissionOutcome {
  accepted: boolean;
  documentId: string;
  documentNumber: string | null;
  uuid: string;
  xmlBase64: string | null;
  report: ValidationReport;
  errors: DocumentErrorItem[];
  position: Position;
}

const toErrorItem = (f: ValidationFinding): DocumentErrorItem => ({
  code: f.code,
  message: f.message,
  path: f.path,
  payloadPath: f.payloadPath ?? null,
  source: 'validation',
});

function numberClaimStream(input: SubmissionInput, documentNumber: string): string {
  const key = [input.workspaceId, input.environment, input.source.companyId ?? input.source.name, documentNumber].join('\n');
  return `docnumber-${createHash('sha256').update(key).digest('hex')}`;
}

/** Claims the number for `documentId`; false when a live or final document holds it. */
async function claimNumber(store: EventStore, input: SubmissionInput, documentNumber: string, documentId: string, ctx: CommandContext): Promise<boolean> {
  const streamId = numberClaimStream(input, documentNumber);
  for (let attempt = 0; attempt < 10; attempt++) {
    // Most numbers are new: the first attempt claims a stream it assumes does not exist yet
    // (expected revision no_stream) without reading it; if it exists, the append fails and the
    // next attempt reads the claim and its holder.
    const claim = attempt === 0 ? { state: numberClaimDecider.initialState, revision: 'no_stream' as const } : await loadAggregate(store, numberClaimDecider, streamId);
    let holderStatus: 'none' | 'rejected' | 'never_submitted' | 'live' = 'none';
    if (claim.state.holder) {
      const holder = await loadAggregate(store, documentDecider, documentStream(claim.state.holder));
      holderStatus = holder.state.state === 'none' ? 'never_submitted' : holder.state.state === 'rejected' ? 'rejected' : 'live';
    }
    try {
      // One attempt per gathered set of facts: a conflict means the holder may have changed.
      const holderId = claim.state.holder;
      await execute(store, numberClaimDecider, streamId, { type: 'Claim', documentNumber, documentId, holderId, holderStatus, now: ctx.now.toISOString() }, ctx, {
        maxAttempts: 1,
        loaded: claim,
      });
      return true;
    } catch (err) {
      if (err instanceof DomainError && err.code === DOCUMENT_NUMBER_REUSED) return false;
      if (err instanceof WrongExpectedVersionError || (err instanceof DomainError && err.code === STALE_CLAIM_FACTS)) continue;
      throw err;
    }
  }
  throw new Error(`could not claim document number ${documentNumber}: too much contention`);
}

export async function submitDocument(store: EventStore, input: SubmissionInput, ctx: CommandContext, produceXml: XmlProducer): Promise<SubmissionOutcome> {
  const template = builtInTemplates.get(input.source.templateId);
  if (!template) {
    throw new DomainError('validation', 'SOURCE_NOT_READY', `the source's mapping template ${input.source.templateId} is not available`, ['source']);
  }
  const started = performance.now();
  const mapped = applyTemplate(template, input.payload);
  let report = validateDocument({
    country: input.country,
    documentType: input.documentType,
    document: mapped.document,
    now: ctx.now,
    pathMap: mapped.pathMap,
    mappingProblems: mapped.problems,
    durationMs: performance.now() - started,
  });
  const header = (mapped.document as { header?: { documentNumber?: unknown } } | null)?.header;
  const documentNumber = typeof header?.documentNumber === 'string' && header.documentNumber.trim() !== '' ? header.documentNumber : null;
  const documentId = randomUUID();
  const uuid = randomUUID();

  if (report.success && documentNumber && !(await claimNumber(store, input, documentNumber, documentId, ctx))) {
    const finding = documentNumberReuseFinding(mapped.pathMap);
    report = {
      ...report,
      success: false,
      errors: [...report.errors, finding],
      metadata: { ...report.metadata, totals: { ...report.metadata.totals, errors: report.metadata.totals.errors + 1 } },
    };
  }

  const received = {
    documentId,
    uuid,
    documentNumber,
    country: input.country,
    environment: input.environment,
    documentType: input.documentType,
    source: { name: input.source.name, version: input.source.version, companyId: input.source.companyId },
    format: input.format,
    externalId: input.externalId,
    destinations: input.destinations,
    coreDocument: mapped.document,
    validation: report,
  };
  const errors = report.errors.map(toErrorItem);
  const xmlBase64 = report.success ? produceXml({ country: input.country, documentType: input.documentType, document: mapped.document, uuid }) : null;
  const event: DocumentEvent & { type: 'DocumentSubmitted' | 'DocumentRejected' } = report.success
    ? { type: 'DocumentSubmitted', data: { ...received, xmlBase64 } }
    : { type: 'DocumentRejected', data: { ...received, errors } };
  // A new stream: nothing to read (a conflict, impossible for a fresh id, would read and retry).
  const result = await execute(store, documentDecider, documentStream(documentId), { type: 'Receive', event }, { ...ctx, environment: input.environment }, {
    loaded: { state: documentDecider.initialState, revision: 'no_stream' },
  });
  return { accepted: report.success, documentId, documentNumber, uuid, xmlBase64, report, errors, position: result.appended!.position };
}
