/**
 * The buyer's answer to a received invoice: the Peppol BIS 3.0 Invoice Response transaction (a
 * UBL 2.1 ApplicationResponse), its code lists, the request a buyer sends us, the XML we write and
 * the reading of one we receive. Pure.
 *
 * Response codes (UNCL4343 subset `UNCL4343OpSubset`): AB acknowledged, IP in process, UQ under
 * query, CA conditionally accepted, RE rejected, AP accepted, PD paid. Status clarifications: a
 * reason (`OPStatusReason`) and an action asked of the seller (`OPStatusAction`), each a code with an
 * optional text. Rules applied here (the BIS's, plus ours for the API):
 * - RE, UQ and CA carry at least one reason or action (what is wrong, or what the seller must do);
 * - RE carries a text (`message`): the seller sees it as the reason of the rejection;
 * - AB, IP, AP and PD carry no reason code other than NON (no issue);
 * - codes come from the lists below, every text at most 1000 characters.
 */
import * as t from 'io-ts';
import { DOMParser } from '@xmldom/xmldom';
import type { Element } from '@xmldom/xmldom';

export const INVOICE_RESPONSE_CUSTOMIZATION_ID = 'urn:fdc:peppol.eu:poacc:trns:invoice_response:3';
export const INVOICE_RESPONSE_PROFILE_ID = 'urn:fdc:peppol.eu:poacc:bis:invoice_response:3';
export const APPLICATION_RESPONSE_NS = 'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2';
export const INVOICE_RESPONSE_DOCUMENT_TYPE_ID = `${APPLICATION_RESPONSE_NS}::ApplicationResponse##${INVOICE_RESPONSE_CUSTOMIZATION_ID}::2.1`;
const CAC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2';
const CBC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2';

export const RESPONSE_CODES = {
  AB: 'Message acknowledgement: the invoice was received by the buyer',
  IP: 'In process: the buyer is processing the invoice',
  UQ: 'Under query: the buyer needs more information or a correction before going on',
  CA: 'Conditionally accepted: accepted under the conditions stated',
  RE: 'Rejected: the buyer will not process the invoice',
  AP: 'Accepted: the buyer will pay the invoice',
  PD: 'Paid: the buyer has paid the invoice',
} as const;
export type ResponseCode = keyof typeof RESPONSE_CODES;

/** OPStatusReason: why the buyer answers as it does. */
export const STATUS_REASON_CODES = {
  NON: 'No issue',
  REF: 'References incorrect',
  LEG: 'Legal information incorrect',
  REC: 'Receiver unknown',
  QUA: 'Item quality insufficient',
  DEL: 'Delivery issues',
  PRI: 'Prices incorrect',
  QTY: 'Quantity incorrect',
  ITM: 'Items incorrect',
  PAY: 'Payment terms incorrect',
  UNR: 'Not recognized',
  FIN: 'Finance terms incorrect',
  PPD: 'Partially paid',
  OTH: 'Other',
} as const;
/** OPStatusAction: what the buyer asks of the seller. */
export const STATUS_ACTION_CODES = {
  NOA: 'No action required',
  PIN: 'Provide information',
  NIN: 'Issue new invoice',
  CNF: 'Credit fully',
  CNP: 'Credit partially',
  CNA: 'Credit the amount',
  OTH: 'Other',
} as const;

/** The business status value (`meta.statuses.business.current`) each answer shows. */
export const BUSINESS_STATUS_OF: Readonly<Record<ResponseCode, string>> = {
  AB: 'ACKNOWLEDGED',
  IP: 'IN_PROCESS',
  UQ: 'UNDER_QUERY',
  CA: 'CONDITIONALLY_ACCEPTED',
  RE: 'REJECTED',
  AP: 'ACCEPTED',
  PD: 'PAID',
};

/** The answers that end a sales document still awaiting its final result. */
export const finalOutcomeOf = (code: ResponseCode): 'valid' | 'invalid' | null => (code === 'RE' ? 'invalid' : code === 'AP' || code === 'PD' ? 'valid' : null);

export const StatusClarification = t.type({
  list: t.keyof({ OPStatusReason: null, OPStatusAction: null }),
  code: t.string,
  text: t.union([t.string, t.null]),
});
export type StatusClarification = t.TypeOf<typeof StatusClarification>;

/** What one Invoice Response says (as recorded in events on both sides). */
export const InvoiceResponseFacts = t.type({
  responseId: t.string,
  code: t.keyof(RESPONSE_CODES),
  /** The rejection's or query's text (first status's text when read from XML). */
  message: t.union([t.string, t.null]),
  clarifications: t.array(StatusClarification),
  note: t.union([t.string, t.null]),
  issueDate: t.string,
  /** The answered invoice: its number (cbc:ID), type code and issue date. */
  invoice: t.type({ id: t.string, typeCode: t.union([t.string, t.null]), issueDate: t.union([t.string, t.null]) }),
  /** Endpoint ids `scheme:value` of the buyer (sender of the response) and the seller (its receiver). */
  senderParticipantId: t.string,
  receiverParticipantId: t.string,
});
export type InvoiceResponseFacts = t.TypeOf<typeof InvoiceResponseFacts>;

/** A problem with the request of a response, with the path of the offending field. */
export interface ResponseInputProblem {
  code: string;
  message: string;
  path: (string | number)[];
}

export interface ResponseRequest {
  code: ResponseCode;
  message: string | null;
  clarifications: StatusClarification[];
  note: string | null;
}

const MAX_TEXT = 1000;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The body of POST …/responses: `{ code, message?, reasons?: [{code, text?}], actions?: [{code, text?}], note? }`.
 * Every problem found, each with its path.
 */
export function decodeResponseRequest(body: unknown): { ok: true; value: ResponseRequest } | { ok: false; problems: ResponseInputProblem[] } {
  const problems: ResponseInputProblem[] = [];
  const bad = (path: (string | number)[], message: string, code = 'VALIDATION_ERROR') => problems.push({ code, message, path: ['body', ...path] });
  if (!isObj(body)) return { ok: false, problems: [{ code: 'VALIDATION_ERROR', message: 'the body must be a JSON object', path: ['body'] }] };
  for (const key of Object.keys(body)) if (!['code', 'message', 'reasons', 'actions', 'note'].includes(key)) bad([key], `unknown field ${key}: the fields are code, message, reasons, actions and note`);
  const code = body.code;
  const known = typeof code === 'string' && Object.hasOwn(RESPONSE_CODES, code);
  if (!known) bad(['code'], `code must be one of ${Object.keys(RESPONSE_CODES).join(', ')}`, 'INVALID_RESPONSE_CODE');
  const text = (v: unknown, path: (string | number)[]): string | null => {
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string' || v.trim() === '') {
      bad(path, 'must be a non-empty string');
      return null;
    }
    if (v.length > MAX_TEXT) bad(path, `must be at most ${MAX_TEXT} characters`);
    return v.trim();
  };
  const message = text(body.message, ['message']);
  const note = text(body.note, ['note']);
  const clarifications: StatusClarification[] = [];
  const list = (field: 'reasons' | 'actions', listId: StatusClarification['list'], codes: Record<string, string>) => {
    const v = body[field];
    if (v === undefined || v === null) return;
    if (!Array.isArray(v) || v.length > 20) {
      bad([field], 'must be an array of at most 20 items');
      return;
    }
    v.forEach((item, i) => {
      if (!isObj(item)) return bad([field, i], 'must be an object {code, text?}');
      for (const key of Object.keys(item)) if (key !== 'code' && key !== 'text') bad([field, i, key], `unknown field ${key}: the fields are code and text`);
      if (typeof item.code !== 'string' || !Object.hasOwn(codes, item.code)) {
        return bad([field, i, 'code'], `must be a code of the ${listId} list: ${Object.keys(codes).join(', ')}`, 'INVALID_STATUS_REASON');
      }
      clarifications.push({ list: listId, code: item.code, text: text(item.text, [field, i, 'text']) });
    });
  };
  list('reasons', 'OPStatusReason', STATUS_REASON_CODES);
  list('actions', 'OPStatusAction', STATUS_ACTION_CODES);
  if (known) {
    const c = code as ResponseCode;
    if ((c === 'RE' || c === 'UQ' || c === 'CA') && clarifications.length === 0) {
      bad(['reasons'], `a ${c} answer needs at least one reason (OPStatusReason) or action (OPStatusAction)`, 'STATUS_REASON_REQUIRED');
    }
    if (c === 'RE' && message === null && body.message === undefined) bad(['message'], 'a rejection needs a message: the seller sees it as the reason', 'STATUS_REASON_REQUIRED');
    if (!(c === 'RE' || c === 'UQ' || c === 'CA')) {
      clarifications.forEach((cl, i) => {
        if (cl.list === 'OPStatusReason' && cl.code !== 'NON') bad(['reasons', i, 'code'], `a ${c} answer gives no reason other than NON (no issue)`, 'INVALID_STATUS_REASON');
      });
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, value: { code: code as ResponseCode, message, clarifications, note } };
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const el = (name: string, value: string | null | undefined, attrs = '') => (value === null || value === undefined || value === '' ? '' : `<${name}${attrs}>${esc(value)}</${name}>`);

/** `scheme:value` into its EAS scheme and value (an id without a scheme keeps it whole). */
export function splitParticipant(id: string): { scheme: string | null; value: string } {
  const m = /^(\d{4}):(.+)$/.exec(id);
  return m ? { scheme: m[1]!, value: m[2]! } : { scheme: null, value: id };
}

function party(participantId: string, name: string | null): string {
  const p = splitParticipant(participantId);
  return `${el('cbc:EndpointID', p.value, p.scheme ? ` schemeID="${esc(p.scheme)}"` : '')}${name ? `<cac:PartyLegalEntity>${el('cbc:RegistrationName', name)}</cac:PartyLegalEntity>` : ''}`;
}

/** The Invoice Response XML (UBL 2.1 ApplicationResponse, elements in the XSD's order). */
export function buildInvoiceResponseXml(facts: InvoiceResponseFacts, names: { buyer: string | null; seller: string | null }): string {
  // The message is the first clarification's text when it has none of its own, else a status of its own, first.
  const first = facts.clarifications[0];
  const messageInFirst = facts.message !== null && first !== undefined && first.text === null;
  const statuses =
    (facts.message !== null && !messageInFirst ? `<cac:Status>${el('cbc:StatusReason', facts.message)}</cac:Status>` : '') +
    facts.clarifications
      .map((c, i) => `<cac:Status>${el('cbc:StatusReasonCode', c.code, ` listID="${c.list}"`)}${el('cbc:StatusReason', c.text ?? (i === 0 && messageInFirst ? facts.message : null))}</cac:Status>`)
      .join('');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<ApplicationResponse xmlns="${APPLICATION_RESPONSE_NS}" xmlns:cac="${CAC}" xmlns:cbc="${CBC}">` +
    el('cbc:CustomizationID', INVOICE_RESPONSE_CUSTOMIZATION_ID) +
    el('cbc:ProfileID', INVOICE_RESPONSE_PROFILE_ID) +
    el('cbc:ID', facts.responseId) +
    el('cbc:IssueDate', facts.issueDate) +
    el('cbc:Note', facts.note) +
    `<cac:SenderParty>${party(facts.senderParticipantId, names.buyer)}</cac:SenderParty>` +
    `<cac:ReceiverParty>${party(facts.receiverParticipantId, names.seller)}</cac:ReceiverParty>` +
    '<cac:DocumentResponse><cac:Response>' +
    el('cbc:ResponseCode', facts.code, ' listID="UNCL4343OpSubset"') +
    el('cbc:EffectiveDate', facts.issueDate) +
    statuses +
    '</cac:Response><cac:DocumentReference>' +
    el('cbc:ID', facts.invoice.id) +
    el('cbc:IssueDate', facts.invoice.issueDate) +
    el('cbc:DocumentTypeCode', facts.invoice.typeCode) +
    '</cac:DocumentReference></cac:DocumentResponse></ApplicationResponse>'
  );
}

/** Why a received Invoice Response cannot be read (one line). */
export class InvoiceResponseRefusal extends Error {
  override readonly name = 'InvoiceResponseRefusal';
  constructor(message: string) {
    super(message);
  }
}

/** Whether the XML's root is a UBL ApplicationResponse (a cheap look at the first element). */
export function isApplicationResponse(xml: string): boolean {
  const m = /<(?:([A-Za-z_][\w.-]*):)?([A-Za-z_][\w.-]*)[\s>/]/.exec(xml.replace(/<\?[\s\S]*?\?>|<!--[\s\S]*?-->/g, ''));
  return m?.[2] === 'ApplicationResponse';
}

const childrenNS = (parent: Element | null | undefined, ns: string, name: string): Element[] => {
  if (!parent) return [];
  const out: Element[] = [];
  for (let n = parent.firstChild; n; n = n.nextSibling) if (n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === name) out.push(n as Element);
  return out;
};
const cac = (p: Element | null | undefined, name: string) => childrenNS(p, CAC, name)[0] ?? null;
const cbcText = (p: Element | null | undefined, name: string): string | null => {
  const e = childrenNS(p, CBC, name)[0];
  const v = e?.textContent?.trim();
  return v ? v : null;
};
const endpoint = (p: Element | null): string | null => {
  const e = childrenNS(p, CBC, 'EndpointID')[0];
  const v = e?.textContent?.trim();
  if (!e || !v) return null;
  const scheme = e.getAttribute('schemeID');
  return scheme ? `${scheme}:${v}` : v;
};
const nameOf = (p: Element | null): string | null => cbcText(cac(p, 'PartyLegalEntity'), 'RegistrationName') ?? cbcText(cac(p, 'PartyName'), 'Name');

/** Reads a received Invoice Response (refused: not one, or a field the transaction requires is missing or wrong). */
export function readInvoiceResponse(xml: string): InvoiceResponseFacts & { names: { buyer: string | null; seller: string | null } } {
  if (/<!DOCTYPE/i.test(xml)) throw new InvoiceResponseRefusal('a document type declaration (DOCTYPE) is not accepted');
  let failure: string | null = null;
  let doc;
  try {
    doc = new DOMParser({ onError: (level, message) => void (level !== 'warning' && (failure ??= String(message).split('\n')[0]!)) }).parseFromString(xml, 'application/xml');
  } catch (err) {
    throw new InvoiceResponseRefusal(`the XML is not well-formed: ${String((err as Error).message).split('\n')[0]}`);
  }
  if (failure || !doc.documentElement) throw new InvoiceResponseRefusal(`the XML is not well-formed: ${failure ?? 'no root element'}`);
  const root = doc.documentElement;
  if (root.namespaceURI !== APPLICATION_RESPONSE_NS || root.localName !== 'ApplicationResponse') throw new InvoiceResponseRefusal('the root element is not a UBL 2.1 ApplicationResponse');
  const customization = cbcText(root, 'CustomizationID');
  if (customization !== INVOICE_RESPONSE_CUSTOMIZATION_ID) throw new InvoiceResponseRefusal(`CustomizationID must be ${INVOICE_RESPONSE_CUSTOMIZATION_ID}, got ${customization ?? 'none'}`);
  const responseId = cbcText(root, 'ID');
  const issueDate = cbcText(root, 'IssueDate');
  const sender = cac(root, 'SenderParty');
  const receiver = cac(root, 'ReceiverParty');
  const documentResponse = cac(root, 'DocumentResponse');
  const response = cac(documentResponse, 'Response');
  const reference = cac(documentResponse, 'DocumentReference');
  const code = cbcText(response, 'ResponseCode');
  const senderId = endpoint(sender);
  const receiverId = endpoint(receiver);
  const invoiceId = cbcText(reference, 'ID');
  const missing = [
    [responseId, 'cbc:ID'],
    [issueDate, 'cbc:IssueDate'],
    [senderId, 'cac:SenderParty/cbc:EndpointID'],
    [receiverId, 'cac:ReceiverParty/cbc:EndpointID'],
    [code, 'cac:DocumentResponse/cac:Response/cbc:ResponseCode'],
    [invoiceId, 'cac:DocumentResponse/cac:DocumentReference/cbc:ID'],
  ].filter(([v]) => !v);
  if (missing.length) throw new InvoiceResponseRefusal(`missing ${missing.map(([, p]) => p).join(', ')}`);
  if (!Object.hasOwn(RESPONSE_CODES, code!)) throw new InvoiceResponseRefusal(`ResponseCode ${code} is not one of ${Object.keys(RESPONSE_CODES).join(', ')}`);
  const clarifications: StatusClarification[] = [];
  // The message: the text of a status without a code (written first), else the first status's text.
  let uncoded: string | null = null;
  let firstText: string | null = null;
  for (const status of childrenNS(response, CAC, 'Status')) {
    const reasonEl = childrenNS(status, CBC, 'StatusReasonCode')[0];
    const text = cbcText(status, 'StatusReason');
    firstText ??= text;
    const reasonCode = reasonEl?.textContent?.trim();
    if (!reasonEl || !reasonCode) {
      uncoded ??= text;
      continue;
    }
    const list = reasonEl.getAttribute('listID') === 'OPStatusAction' ? 'OPStatusAction' : 'OPStatusReason';
    clarifications.push({ list, code: reasonCode, text });
  }
  return {
    responseId: responseId!,
    code: code as ResponseCode,
    message: uncoded ?? firstText,
    clarifications,
    note: cbcText(root, 'Note'),
    issueDate: issueDate!,
    invoice: { id: invoiceId!, typeCode: cbcText(reference, 'DocumentTypeCode'), issueDate: cbcText(reference, 'IssueDate') },
    senderParticipantId: senderId!,
    receiverParticipantId: receiverId!,
    names: { buyer: nameOf(sender), seller: nameOf(receiver) },
  };
}

/** The error the seller's document shows for a rejection. */
export function buyerRejectionError(facts: Pick<InvoiceResponseFacts, 'message' | 'clarifications'>) {
  const reasons = facts.clarifications.map((c) => c.code).join(', ');
  const text = facts.message ?? facts.clarifications.find((c) => c.text)?.text ?? 'no reason given';
  return { code: 'BUYER_REJECTED', message: reasons ? `The buyer rejected the invoice (${reasons}): ${text}` : `The buyer rejected the invoice: ${text}`, path: [] as string[], source: 'delivery' as const };
}

/** The answer as the seller's status object and the buyer's list show it. */
export function responseView(facts: InvoiceResponseFacts, extra: { receivedAt?: string; sentAt?: string; channel: string }) {
  return {
    responseId: facts.responseId,
    code: facts.code,
    meaning: RESPONSE_CODES[facts.code],
    businessStatus: BUSINESS_STATUS_OF[facts.code],
    message: facts.message,
    reasons: facts.clarifications.filter((c) => c.list === 'OPStatusReason').map(({ code, text }) => ({ code, text })),
    actions: facts.clarifications.filter((c) => c.list === 'OPStatusAction').map(({ code, text }) => ({ code, text })),
    note: facts.note,
    issueDate: facts.issueDate,
    invoiceNumber: facts.invoice.id,
    senderParticipantId: facts.senderParticipantId,
    receiverParticipantId: facts.receiverParticipantId,
    channel: extra.channel,
    ...(extra.receivedAt ? { receivedAt: extra.receivedAt } : {}),
    ...(extra.sentAt ? { sentAt: extra.sentAt } : {}),
  };
}
