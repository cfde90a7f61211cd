/**
 * The document status object of docs/api/unify.md, derived from what is known of a sales
 * document. Pure: the read side stores the facts, this function shapes them.
 */
import { isTerminal, type DocumentErrorItem, type DocumentState } from './document.js';

export const COMPLIANCE_COUNTRIES: ReadonlySet<string> = new Set(['AE', 'BE', 'DE']);

export interface DocumentFacts {
  documentId: string;
  documentNumber: string | null;
  country: string;
  environment: string;
  state: DocumentState;
  uuid: string | null;
  lastUpdatedAt: Date;
  errors: DocumentErrorItem[];
  government: unknown;
  xmlBase64: string | null;
  tddXmlBase64: string | null;
  /** Peppol identifiers of the produced XML (AE, BE, DE). */
  compliance: { businessProcessIdentifier: string | null; specificationIdentifier: string | null } | null;
}

type StepStatus = 'Valid' | 'Invalid' | 'Pending' | null;
interface Step {
  name: string;
  status: StepStatus;
  error: { code: string; message: string } | null;
}

const firstError = (errors: DocumentErrorItem[], source?: DocumentErrorItem['source']) => {
  const e = errors.find((x) => !source || x.source === source);
  return e ? { code: e.code, message: e.message } : null;
};

export function validationSteps(state: DocumentState, errors: DocumentErrorItem[]): Step[] {
  const rejected = state === 'rejected';
  const reachedQueue = !rejected;
  const started = ['processing', 'delivery_success', 'delivery_failed', 'final_valid', 'final_invalid'].includes(state);
  const steps: Step[] = [
    rejected
      ? { name: 'Validation Failed', status: 'Invalid', error: firstError(errors, 'validation') }
      : { name: 'Validation Passed', status: 'Valid', error: null },
    { name: 'Queue Admitted', status: reachedQueue ? 'Valid' : null, error: null },
    { name: 'Delivery Processing Started', status: started ? 'Valid' : null, error: null },
  ];
  switch (state) {
    case 'delivery_success':
      steps.push({ name: 'Delivery Success', status: 'Valid', error: null });
      break;
    case 'delivery_failed':
      steps.push({ name: 'Delivery Failed', status: 'Invalid', error: firstError(errors, 'delivery') ?? firstError(errors) });
      break;
    case 'final_valid':
      steps.push({ name: 'Final Valid', status: 'Valid', error: null });
      break;
    case 'final_invalid':
      steps.push({ name: 'Final Invalid', status: 'Invalid', error: firstError(errors, 'government') ?? firstError(errors) });
      break;
    default:
      // Not reached yet: the step the document waits for, without a status (or pending once started).
      steps.push({ name: 'Delivery Success', status: state === 'processing' ? 'Pending' : null, error: null });
  }
  return steps;
}

/**
 * The step a change to `state` reached: the one `validationSteps` shows last for that state
 * (`Queue Admitted` for a submitted document, `Validation Failed` for a rejected one, `Delivery
 * Processing Started` for a delivery under way, else the fourth step).
 */
export function changedStep(state: DocumentState, errors: DocumentErrorItem[]): Step {
  const steps = validationSteps(state, errors);
  const index = state === 'rejected' ? 0 : state === 'submitted' ? 1 : state === 'processing' ? 2 : 3;
  return steps[index]!;
}

export function ftaApprovedStatus(state: DocumentState): 'APPROVED' | 'REJECTED' | 'PENDING' {
  if (state === 'final_valid') return 'APPROVED';
  if (state === 'final_invalid' || state === 'rejected') return 'REJECTED';
  return 'PENDING';
}

export function documentStatusView(facts: DocumentFacts) {
  const overall: StepStatus =
    facts.state === 'rejected' || facts.state === 'final_invalid' ? 'Invalid' : facts.state === 'final_valid' ? 'Valid' : 'Pending';
  const artifacts = facts.xmlBase64
    ? {
        invoiceXmlBase64: facts.xmlBase64,
        invoiceXmlEncoding: 'base64' as const,
        ...(facts.country === 'AE' && facts.tddXmlBase64 ? { tddXmlBase64: facts.tddXmlBase64 } : {}),
      }
    : null;
  const view: Record<string, unknown> = {
    documentId: facts.documentId,
    documentNumber: facts.documentNumber,
    country: facts.country,
    environment: facts.environment,
    state: facts.state,
    isTerminal: isTerminal(facts.state),
    lastUpdatedAt: facts.lastUpdatedAt.toISOString(),
    errors: facts.errors.map(({ code, message, path, source }) => ({ code, message, path, source })),
    government: facts.government ?? null,
    artifacts,
  };
  if (COMPLIANCE_COUNTRIES.has(facts.country)) {
    view.compliance = {
      ftaApprovedStatus: ftaApprovedStatus(facts.state),
      uuid: facts.uuid ?? facts.documentNumber,
      businessProcessIdentifier: facts.compliance?.businessProcessIdentifier ?? null,
      specificationIdentifier: facts.compliance?.specificationIdentifier ?? null,
    };
  }
  view.validationResults = { status: overall, validationSteps: validationSteps(facts.state, facts.errors) };
  // The buyer's latest answer (a Peppol Invoice Response), only on documents that received one.
  const answer = (facts.government as { buyerResponse?: { responseId?: unknown } } | null)?.buyerResponse;
  if (answer && typeof answer.responseId === 'string') view.buyerResponse = answer;
  return view;
}
