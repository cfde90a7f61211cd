/**
 * Participant lookup (docs/api/participant-lookup.md): whether a Peppol participant can be sent
 * to, and which document types and processes it receives. Pure: the identifier's form, what the
 * sandbox network receives, and the answer's shape.
 */
import { PEPPOL_EAS_CODES } from '../artifacts/codes.js';
import { PEPPOL_BIS_CUSTOMIZATION_ID, PEPPOL_BIS_PROFILE_ID, PEPPOL_SELF_BILLING_CUSTOMIZATION_ID, PEPPOL_SELF_BILLING_PROFILE_ID, XRECHNUNG_CUSTOMIZATION_ID } from '../artifacts/peppol-bis.js';
import { PINT_AE_CUSTOMIZATION_ID, PINT_AE_PROFILE_ID, PINT_AE_SELFBILLING_CUSTOMIZATION_ID, PINT_AE_SELFBILLING_PROFILE_ID } from '../artifacts/pint-ae.js';
import { INVOICE_RESPONSE_DOCUMENT_TYPE_ID, INVOICE_RESPONSE_PROFILE_ID } from './invoice-response.js';
import { DOCUMENT_TYPE_SCHEME, PARTICIPANT_SCHEME, PROCESS_SCHEME } from './identifiers.js';

export type ParticipantParse = { ok: true; scheme: string; value: string } | { ok: false; message: string };

/**
 * `<EAS>:<id>` or `iso6523-actorid-upis::<EAS>:<id>`: a 4-digit scheme of the Peppol EAS code
 * list and an identifier of 1 to 50 visible characters (Peppol Policy for use of Identifiers).
 */
export function parseParticipantId(raw: string): ParticipantParse {
  const prefix = `${PARTICIPANT_SCHEME}::`;
  const id = raw.toLowerCase().startsWith(prefix) ? raw.slice(prefix.length) : raw;
  const m = /^(\d{4}):([\x21-\x7e]{1,50})$/.exec(id);
  if (!m) return { ok: false, message: `a participant identifier is <scheme>:<identifier>, e.g. 0208:0123456789 (optionally prefixed ${prefix}), got "${raw.slice(0, 80)}"` };
  if (!PEPPOL_EAS_CODES.has(m[1]!)) return { ok: false, message: `${m[1]} is not a scheme of the Peppol EAS code list` };
  return { ok: true, scheme: PARTICIPANT_SCHEME, value: `${m[1]}:${m[2]}` };
}

/** A document type or process id as the SMP lists it: with its scheme (`busdox-docid-qns::…`, `cenbii-procid-ubl::…`). */
export const withScheme = (id: string, scheme: string): string => (/^[a-z0-9-]+::/i.test(id) && !id.startsWith('urn:') ? id : `${scheme}::${id}`);

const INVOICE = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice';
const CREDIT_NOTE = 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2::CreditNote';
const type = (root: string, customization: string) => `${DOCUMENT_TYPE_SCHEME}::${root}##${customization}::2.1`;
const proc = (id: string) => ({ processId: `${PROCESS_SCHEME}::${id}`, transportProfiles: ['sandbox-network'] });

/** What every company onboarded on the sandbox network receives: what the service sends over Peppol. */
export const SANDBOX_NETWORK_SERVICES: readonly { documentTypeId: string; processes: { processId: string; transportProfiles: string[] }[] }[] = [
  ...[INVOICE, CREDIT_NOTE].flatMap((root) => [
    { documentTypeId: type(root, PEPPOL_BIS_CUSTOMIZATION_ID), processes: [proc(PEPPOL_BIS_PROFILE_ID)] },
    { documentTypeId: type(root, XRECHNUNG_CUSTOMIZATION_ID), processes: [proc(PEPPOL_BIS_PROFILE_ID)] },
    { documentTypeId: type(root, PEPPOL_SELF_BILLING_CUSTOMIZATION_ID), processes: [proc(PEPPOL_SELF_BILLING_PROFILE_ID)] },
    { documentTypeId: type(root, PINT_AE_CUSTOMIZATION_ID), processes: [proc(PINT_AE_PROFILE_ID)] },
    { documentTypeId: type(root, PINT_AE_SELFBILLING_CUSTOMIZATION_ID), processes: [proc(PINT_AE_SELFBILLING_PROFILE_ID)] },
  ]),
  { documentTypeId: `${DOCUMENT_TYPE_SCHEME}::${INVOICE_RESPONSE_DOCUMENT_TYPE_ID}`, processes: [proc(INVOICE_RESPONSE_PROFILE_ID)] },
];

export type LookupStatus = 'REGISTERED' | 'NOT_REGISTERED' | 'DOCUMENT_TYPE_NOT_SUPPORTED' | 'PROCESS_NOT_SUPPORTED' | 'TRANSPORT_NOT_SUPPORTED';

export interface LookupAnswer {
  participantId: string;
  participantScheme: string;
  environment: string;
  source: 'sandbox_network' | 'smp';
  status: LookupStatus;
  /** Registered, and (when asked) for the document type and process over a transport this service sends with. */
  reachable: boolean;
  detail: string | null;
  requested: { documentTypeId: string; processId: string | null } | null;
  documentTypes: { documentTypeId: string; processes: { processId: string; transportProfiles: string[] }[] }[];
  unreadableDocumentTypes: { documentTypeId: string; reason: string }[];
  validUntil: string;
}

const sameId = (a: string, b: string) => {
  const split = (s: string) => {
    const at = s.indexOf('::');
    return { scheme: s.slice(0, at).toLowerCase(), value: s.slice(at + 2) };
  };
  const x = split(a);
  const y = split(b);
  return x.scheme === y.scheme && x.value === y.value;
};

/**
 * The answer from what is known of the participant: not registered; registered, but not for the
 * document type (or process, or transport) asked; registered (and reachable for it).
 */
export function lookupAnswer(input: {
  participant: { scheme: string; value: string };
  environment: string;
  source: LookupAnswer['source'];
  registered: boolean;
  detail: string | null;
  documentTypes: LookupAnswer['documentTypes'];
  unreadable?: LookupAnswer['unreadableDocumentTypes'];
  requested: LookupAnswer['requested'];
  /** The transport profile this service sends with in that environment. */
  transportProfile: string;
  validUntil: string;
}): LookupAnswer {
  const base = {
    participantId: input.participant.value,
    participantScheme: input.participant.scheme,
    environment: input.environment,
    source: input.source,
    requested: input.requested,
    documentTypes: input.registered ? input.documentTypes : [],
    unreadableDocumentTypes: input.unreadable ?? [],
    validUntil: input.validUntil,
  };
  if (!input.registered) return { ...base, status: 'NOT_REGISTERED', reachable: false, detail: input.detail ?? `${input.participant.value} is not registered` };
  const req = input.requested;
  if (!req) return { ...base, status: 'REGISTERED', reachable: input.documentTypes.length > 0, detail: null };
  const type = input.documentTypes.find((d) => sameId(d.documentTypeId, req.documentTypeId));
  if (!type) return { ...base, status: 'DOCUMENT_TYPE_NOT_SUPPORTED', reachable: false, detail: `${input.participant.value} is registered, but does not receive ${req.documentTypeId}` };
  const processes = req.processId ? type.processes.filter((p) => sameId(p.processId, req.processId!)) : type.processes;
  if (processes.length === 0) return { ...base, status: 'PROCESS_NOT_SUPPORTED', reachable: false, detail: `${input.participant.value} receives ${req.documentTypeId}, but not in the process ${req.processId}` };
  if (!processes.some((p) => p.transportProfiles.includes(input.transportProfile))) {
    return { ...base, status: 'TRANSPORT_NOT_SUPPORTED', reachable: false, detail: `${input.participant.value} has no active ${input.transportProfile} endpoint for ${req.documentTypeId}` };
  }
  return { ...base, status: 'REGISTERED', reachable: true, detail: null };
}
