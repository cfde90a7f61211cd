/**
 * ebMS 3 messaging headers as the Peppol AS4 profile uses them: the user message that carries a
 * document (parties by their access point certificate's CN, the Peppol agreement, the process as
 * service, the document type as action, originalSender / finalRecipient properties, one
 * compressed payload part), the receipt (non-repudiation of the received message's signed parts)
 * and the error signal; and the classification of ebMS error codes into permanent and transient.
 * Pure: strings in, strings and values out (the DOM is xmldom's).
 */
import type { Document, Element } from '@xmldom/xmldom';
import { DOCUMENT_TYPE_SCHEME, PARTICIPANT_SCHEME, PROCESS_SCHEME, type PeppolParticipant } from './identifiers.js';

export const NS = {
  soap: 'http://www.w3.org/2003/05/soap-envelope',
  eb: 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/',
  ebbp: 'http://docs.oasis-open.org/ebxml-bp/ebbp-signals-2.0',
  wsse: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd',
  wsse11: 'http://docs.oasis-open.org/wss/oasis-wss-wssecurity-secext-1.1.xsd',
  wsu: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd',
  ds: 'http://www.w3.org/2000/09/xmldsig#',
  xenc: 'http://www.w3.org/2001/04/xmlenc#',
  xenc11: 'http://www.w3.org/2009/xmlenc11#',
  ec: 'http://www.w3.org/2001/10/xml-exc-c14n#',
} as const;

export const PEPPOL_AGREEMENT = 'urn:fdc:peppol.eu:2017:agreements:tia:ap_provider';
export const PEPPOL_PARTY_TYPE = 'urn:fdc:peppol.eu:2017:identifiers:ap';
export const ROLE_INITIATOR = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/initiator';
export const ROLE_RESPONDER = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/responder';

export interface UserMessageHeader {
  messageId: string;
  timestamp: string;
  conversationId: string;
  /** The sending and receiving access points: their certificates' common names. */
  fromParty: string;
  toParty: string;
  processId: string;
  documentTypeId: string;
  originalSender: PeppolParticipant;
  finalRecipient: PeppolParticipant;
  /** The payload part's Content-ID (without `cid:`). */
  payloadContentId: string;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * Character data and attribute values escaped as exclusive C14N writes them (&, <, > and CR in
 * text; &, <, ", TAB, LF and CR in attributes). Valid XML as they stand, and what a parser reads
 * back is the value itself (no line-end or attribute-value normalisation), so an element written
 * with them, its attributes in canonical order and its empty elements written out, is its own
 * canonical form.
 */
const c14nText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');
export const c14nAttr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;').replace(/\t/g, '&#x9;').replace(/\n/g, '&#xA;').replace(/\r/g, '&#xD;');

/**
 * The eb:Messaging header of a Peppol user message (namespaces declared on it; wsu:Id given), as
 * sent (`xml`) and in exclusive C14N form (`canonical`: what its signature reference digests,
 * without parsing and canonicalising what was just written). The two differ only in the order of
 * the start tag's namespace declarations and attributes; test/peppol/as4-canonical.test.ts proves
 * `canonical` byte-identical to xml-crypto's exclusive C14N of `xml` inside the envelope.
 */
export function userMessage(h: UserMessageHeader, wsuId: string): { xml: string; canonical: string } {
  const t = c14nText;
  const a = c14nAttr;
  const prop = (name: string, p: PeppolParticipant) => `<eb:Property name="${name}" type="${a(p.scheme)}">${t(p.value)}</eb:Property>`;
  const content =
    `<eb:UserMessage>` +
    `<eb:MessageInfo><eb:Timestamp>${t(h.timestamp)}</eb:Timestamp><eb:MessageId>${t(h.messageId)}</eb:MessageId></eb:MessageInfo>` +
    `<eb:PartyInfo>` +
    `<eb:From><eb:PartyId type="${PEPPOL_PARTY_TYPE}">${t(h.fromParty)}</eb:PartyId><eb:Role>${ROLE_INITIATOR}</eb:Role></eb:From>` +
    `<eb:To><eb:PartyId type="${PEPPOL_PARTY_TYPE}">${t(h.toParty)}</eb:PartyId><eb:Role>${ROLE_RESPONDER}</eb:Role></eb:To>` +
    `</eb:PartyInfo>` +
    `<eb:CollaborationInfo>` +
    `<eb:AgreementRef>${PEPPOL_AGREEMENT}</eb:AgreementRef>` +
    `<eb:Service type="${PROCESS_SCHEME}">${t(h.processId)}</eb:Service>` +
    `<eb:Action>${t(`${DOCUMENT_TYPE_SCHEME}::${h.documentTypeId}`)}</eb:Action>` +
    `<eb:ConversationId>${t(h.conversationId)}</eb:ConversationId>` +
    `</eb:CollaborationInfo>` +
    `<eb:MessageProperties>${prop('originalSender', h.originalSender)}${prop('finalRecipient', h.finalRecipient)}</eb:MessageProperties>` +
    `<eb:PayloadInfo><eb:PartInfo href="cid:${a(h.payloadContentId)}"><eb:PartProperties>` +
    `<eb:Property name="MimeType">application/xml</eb:Property><eb:Property name="CompressionType">application/gzip</eb:Property>` +
    `</eb:PartProperties></eb:PartInfo></eb:PayloadInfo>` +
    `</eb:UserMessage>` +
    `</eb:Messaging>`;
  const id = a(wsuId);
  return {
    xml: `<eb:Messaging xmlns:eb="${NS.eb}" xmlns:S12="${NS.soap}" xmlns:wsu="${NS.wsu}" S12:mustUnderstand="true" wsu:Id="${id}">` + content,
    // Exclusive C14N: namespace declarations by prefix (code point order), then attributes by namespace URI.
    canonical: `<eb:Messaging xmlns:S12="${NS.soap}" xmlns:eb="${NS.eb}" xmlns:wsu="${NS.wsu}" wsu:Id="${id}" S12:mustUnderstand="true">` + content,
  };
}

/** The eb:Messaging header of a Peppol user message as sent. */
export const userMessageXml = (h: UserMessageHeader, wsuId: string): string => userMessage(h, wsuId).xml;

/** A ds:Reference of a signature, as the receipt's non-repudiation information repeats it. */
export interface SignedReference {
  uri: string;
  /** The whole ds:Reference element, serialized as received (copied into the receipt). */
  xml: string;
  digestAlgorithm: string;
  digestValue: string;
}

/** Prefixes the receipt's eb:Messaging and ebbp:NonRepudiationInformation declare (and render in exclusive C14N). */
const RECEIPT_PREFIXES = [`xmlns:S12="${NS.soap}"`, `xmlns:eb="${NS.eb}"`, `xmlns:wsu="${NS.wsu}"`, `xmlns:ebbp="${NS.ebbp}"`];

/**
 * The eb:Messaging header of a receipt with non-repudiation information, as sent (`xml`) and in
 * exclusive C14N form (`canonical`: what its signature reference digests, without parsing back
 * what was just written), as `userMessage` does for a user message. Each reference's `xml` is the
 * received ds:Reference in exclusive C14N form (commands/peppol/as4/wss.ts), so it is its own
 * canonical form inside the receipt too, unless it declares one of the prefixes the receipt's
 * ancestors render with the same namespace (exclusive C14N would not repeat that declaration):
 * then `canonical` is null and the caller canonicalises the parsed header.
 * test/peppol/as4-canonical.test.ts proves `canonical` byte-identical to xml-crypto's.
 */
export function receiptSignal(r: { messageId: string; timestamp: string; refToMessageId: string; references: readonly SignedReference[] }, wsuId: string): { xml: string; canonical: string | null } {
  const t = c14nText;
  const id = c14nAttr(wsuId);
  const content =
    `<eb:SignalMessage>` +
    `<eb:MessageInfo><eb:Timestamp>${t(r.timestamp)}</eb:Timestamp><eb:MessageId>${t(r.messageId)}</eb:MessageId><eb:RefToMessageId>${t(r.refToMessageId)}</eb:RefToMessageId></eb:MessageInfo>` +
    `<eb:Receipt><ebbp:NonRepudiationInformation xmlns:ebbp="${NS.ebbp}">` +
    r.references.map((ref) => `<ebbp:MessagePartNRInformation>${ref.xml}</ebbp:MessagePartNRInformation>`).join('') +
    `</ebbp:NonRepudiationInformation></eb:Receipt>` +
    `</eb:SignalMessage>` +
    `</eb:Messaging>`;
  const standalone = r.references.every((ref) => !RECEIPT_PREFIXES.some((p) => ref.xml.includes(p)));
  return {
    xml: `<eb:Messaging xmlns:eb="${NS.eb}" xmlns:S12="${NS.soap}" xmlns:wsu="${NS.wsu}" S12:mustUnderstand="true" wsu:Id="${id}">` + content,
    // Exclusive C14N: namespace declarations by prefix (code point order), then attributes by namespace URI.
    canonical: standalone ? `<eb:Messaging xmlns:S12="${NS.soap}" xmlns:eb="${NS.eb}" xmlns:wsu="${NS.wsu}" wsu:Id="${id}" S12:mustUnderstand="true">` + content : null,
  };
}

/** An ebMS error as the receiving side reports it. */
export interface EbmsError {
  code: string;
  severity: 'failure' | 'warning';
  shortDescription: string;
  category: string;
  description: string;
  detail?: string;
  refToMessageInError: string | null;
}

/** The ebMS 3 error codes this access point answers with (core specification, section 6.7). */
export const EBMS_ERRORS = {
  VALUE_NOT_RECOGNIZED: { code: 'EBMS:0001', shortDescription: 'ValueNotRecognized', category: 'Content' },
  FEATURE_NOT_SUPPORTED: { code: 'EBMS:0002', shortDescription: 'FeatureNotSupported', category: 'Content' },
  VALUE_INCONSISTENT: { code: 'EBMS:0003', shortDescription: 'ValueInconsistent', category: 'Content' },
  OTHER: { code: 'EBMS:0004', shortDescription: 'Other', category: 'Content' },
  MIME_INCONSISTENCY: { code: 'EBMS:0007', shortDescription: 'MimeInconsistency', category: 'Unpackaging' },
  INVALID_HEADER: { code: 'EBMS:0009', shortDescription: 'InvalidHeader', category: 'Unpackaging' },
  PROCESSING_MODE_MISMATCH: { code: 'EBMS:0010', shortDescription: 'ProcessingModeMismatch', category: 'Processing' },
  FAILED_AUTHENTICATION: { code: 'EBMS:0101', shortDescription: 'FailedAuthentication', category: 'Processing' },
  FAILED_DECRYPTION: { code: 'EBMS:0102', shortDescription: 'FailedDecryption', category: 'Processing' },
  POLICY_NONCOMPLIANCE: { code: 'EBMS:0103', shortDescription: 'PolicyNoncompliance', category: 'Processing' },
  DECOMPRESSION_FAILURE: { code: 'EBMS:0303', shortDescription: 'DecompressionFailure', category: 'Communication' },
} as const;

export type EbmsErrorKind = keyof typeof EBMS_ERRORS;

export function ebmsError(kind: EbmsErrorKind, description: string, refToMessageInError: string | null): EbmsError {
  const e = EBMS_ERRORS[kind];
  return { code: e.code, shortDescription: e.shortDescription, category: e.category, severity: 'failure', description, refToMessageInError };
}

export function errorSignalXml(r: { messageId: string; timestamp: string; refToMessageId: string | null; errors: readonly EbmsError[] }, wsuId: string): string {
  const errors = r.errors
    .map(
      (e) =>
        `<eb:Error category="${esc(e.category)}" errorCode="${esc(e.code)}" origin="ebMS"` +
        (e.refToMessageInError ? ` refToMessageInError="${esc(e.refToMessageInError)}"` : '') +
        ` severity="${e.severity}" shortDescription="${esc(e.shortDescription)}">` +
        `<eb:Description xml:lang="en">${esc(e.description)}</eb:Description>` +
        (e.detail ? `<eb:ErrorDetail>${esc(e.detail)}</eb:ErrorDetail>` : '') +
        `</eb:Error>`,
    )
    .join('');
  return (
    `<eb:Messaging xmlns:eb="${NS.eb}" xmlns:S12="${NS.soap}" xmlns:wsu="${NS.wsu}" S12:mustUnderstand="true" wsu:Id="${wsuId}">` +
    `<eb:SignalMessage>` +
    `<eb:MessageInfo><eb:Timestamp>${esc(r.timestamp)}</eb:Timestamp><eb:MessageId>${esc(r.messageId)}</eb:MessageId>` +
    (r.refToMessageId ? `<eb:RefToMessageId>${esc(r.refToMessageId)}</eb:RefToMessageId>` : '') +
    `</eb:MessageInfo>` +
    errors +
    `</eb:SignalMessage>` +
    `</eb:Messaging>`
  );
}

// ---- reading ------------------------------------------------------------------------------

const kids = (e: Element | null | undefined, ns: string, local: string): Element[] => {
  const out: Element[] = [];
  for (let n = e?.firstChild; n; n = n.nextSibling) if (n.nodeType === 1 && (n as Element).localName === local && (n as Element).namespaceURI === ns) out.push(n as Element);
  return out;
};
const kid = (e: Element | null | undefined, local: string) => kids(e, NS.eb, local)[0] ?? null;
const text = (e: Element | null) => e?.textContent?.trim() || null;

/** Why an eb:Messaging header is refused. */
export class EbmsHeaderError extends Error {
  override readonly name = 'EbmsHeaderError';
  constructor(
    readonly kind: EbmsErrorKind,
    message: string,
    readonly messageId: string | null = null,
  ) {
    super(message);
  }
}

export interface ReadUserMessage {
  messageId: string;
  timestamp: string | null;
  conversationId: string | null;
  fromParty: string | null;
  toParty: string | null;
  agreementRef: string | null;
  service: string | null;
  action: string | null;
  originalSender: PeppolParticipant | null;
  finalRecipient: PeppolParticipant | null;
  /** The payload parts' hrefs (`cid:…`) with their properties. */
  parts: { href: string; properties: Record<string, string> }[];
}

/** Reads the user message of an eb:Messaging element and checks what the Peppol profile requires. */
export function readUserMessage(messaging: Element): ReadUserMessage {
  const user = kid(messaging, 'UserMessage');
  if (!user) throw new EbmsHeaderError('INVALID_HEADER', 'eb:Messaging carries no eb:UserMessage');
  const info = kid(user, 'MessageInfo');
  const messageId = text(kid(info, 'MessageId'));
  if (!messageId) throw new EbmsHeaderError('INVALID_HEADER', 'eb:UserMessage has no eb:MessageId');
  const party = (which: string) => text(kid(kid(kid(user, 'PartyInfo'), which), 'PartyId'));
  const collab = kid(user, 'CollaborationInfo');
  const props: Record<string, PeppolParticipant> = {};
  for (const p of kids(kid(user, 'MessageProperties'), NS.eb, 'Property')) {
    const name = p.getAttribute('name');
    const value = text(p);
    if (name && value) props[name] = { scheme: p.getAttribute('type') || PARTICIPANT_SCHEME, value };
  }
  const parts = kids(kid(user, 'PayloadInfo'), NS.eb, 'PartInfo').map((pi) => {
    const properties: Record<string, string> = {};
    for (const p of kids(kid(pi, 'PartProperties'), NS.eb, 'Property')) properties[p.getAttribute('name') ?? ''] = text(p) ?? '';
    return { href: pi.getAttribute('href') ?? '', properties };
  });
  const um: ReadUserMessage = {
    messageId,
    timestamp: text(kid(info, 'Timestamp')),
    conversationId: text(kid(collab, 'ConversationId')),
    fromParty: party('From'),
    toParty: party('To'),
    agreementRef: text(kid(collab, 'AgreementRef')),
    service: text(kid(collab, 'Service')),
    action: text(kid(collab, 'Action')),
    originalSender: props.originalSender ?? null,
    finalRecipient: props.finalRecipient ?? null,
    parts,
  };
  if (um.agreementRef !== PEPPOL_AGREEMENT) throw new EbmsHeaderError('PROCESSING_MODE_MISMATCH', `the agreement ${um.agreementRef ?? '(none)'} is not ${PEPPOL_AGREEMENT}`, messageId);
  if (!um.originalSender || !um.finalRecipient) throw new EbmsHeaderError('INVALID_HEADER', 'the originalSender and finalRecipient message properties are required', messageId);
  if (parts.length !== 1 || !parts[0]!.href.startsWith('cid:')) throw new EbmsHeaderError('VALUE_INCONSISTENT', `a Peppol message carries exactly one attachment payload (found ${parts.length})`, messageId);
  return um;
}

/** The document type id named by an eb:Action (`busdox-docid-qns::<id>`, or the bare id). */
export const actionDocumentTypeId = (action: string | null): string | null =>
  action ? (action.startsWith(`${DOCUMENT_TYPE_SCHEME}::`) ? action.slice(DOCUMENT_TYPE_SCHEME.length + 2) : action) : null;

export type ReadSignal =
  | { kind: 'receipt'; messageId: string | null; refToMessageId: string | null; references: { uri: string; digestAlgorithm: string; digestValue: string }[] }
  | { kind: 'error'; messageId: string | null; refToMessageId: string | null; errors: EbmsError[] };

/** Reads the signal of a response's eb:Messaging (receipt or errors). Null: neither. */
export function readSignal(messaging: Element): ReadSignal | null {
  const signal = kid(messaging, 'SignalMessage');
  if (!signal) return null;
  const info = kid(signal, 'MessageInfo');
  const messageId = text(kid(info, 'MessageId'));
  const refToMessageId = text(kid(info, 'RefToMessageId'));
  const errors = kids(signal, NS.eb, 'Error');
  if (errors.length > 0) {
    return {
      kind: 'error',
      messageId,
      refToMessageId,
      errors: errors.map((e) => ({
        code: e.getAttribute('errorCode') ?? '',
        severity: e.getAttribute('severity') === 'warning' ? 'warning' : 'failure',
        shortDescription: e.getAttribute('shortDescription') ?? '',
        category: e.getAttribute('category') ?? '',
        description: text(kid(e, 'Description')) ?? '',
        detail: text(kid(e, 'ErrorDetail')) ?? undefined,
        refToMessageInError: e.getAttribute('refToMessageInError') || refToMessageId,
      })),
    };
  }
  const receipt = kid(signal, 'Receipt');
  if (!receipt) return null;
  const references: { uri: string; digestAlgorithm: string; digestValue: string }[] = [];
  const all = receipt.getElementsByTagNameNS(NS.ds, 'Reference');
  for (let i = 0; i < all.length; i++) {
    const r = all.item(i)!;
    const dm = r.getElementsByTagNameNS(NS.ds, 'DigestMethod').item(0);
    const dv = r.getElementsByTagNameNS(NS.ds, 'DigestValue').item(0);
    references.push({ uri: r.getAttribute('URI') ?? '', digestAlgorithm: dm?.getAttribute('Algorithm') ?? '', digestValue: (dv?.textContent ?? '').replace(/\s+/g, '') });
  }
  return { kind: 'receipt', messageId, refToMessageId, references };
}

// ---- classification -----------------------------------------------------------------------

/**
 * Whether an ebMS error ends a delivery or is worth another attempt. Transient: the receiving
 * side could not take the message now (connection failure, missing receipt, and any error
 * reported with severity `warning`). Everything else is permanent: the same message would be
 * refused again (security, header, payload, or business refusals).
 */
const TRANSIENT_CODES: ReadonlySet<string> = new Set(['EBMS:0005', 'EBMS:0006', 'EBMS:0301']);

export function isTransientEbmsError(e: Pick<EbmsError, 'code' | 'severity'>): boolean {
  return e.severity === 'warning' || TRANSIENT_CODES.has(e.code);
}

/** A refusal of a duplicate (the same message id received before): the message did arrive. */
export function isDuplicateRefusal(e: Pick<EbmsError, 'code' | 'description' | 'shortDescription' | 'detail'>): boolean {
  return e.code === 'EBMS:0004' && /duplicate/i.test(`${e.shortDescription} ${e.description} ${e.detail ?? ''}`);
}

/** Whether an HTTP status of an AS4 response is worth another attempt. */
export const isTransientHttpStatus = (status: number): boolean => status >= 500 || status === 408 || status === 429;
