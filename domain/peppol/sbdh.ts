/**
 * The Peppol envelope (SBDH 1.0, the Standard Business Document Header as Peppol's envelope
 * specification profiles it): built around a UBL document for sending, and read back and checked
 * against its payload on receipt. The payload is carried byte for byte: what the sender wrapped is
 * what the receiver takes out. Pure.
 */
import type { Document, Element } from '@xmldom/xmldom';
import { XMLSerializer } from '@xmldom/xmldom';
import {
  DOCUMENT_TYPE_SCHEME,
  PARTICIPANT_SCHEME,
  PROCESS_SCHEME,
  parseDocumentTypeId,
  peppolIdentifiersOf,
  PeppolIdentifierError,
  sameParticipant,
  type PeppolIdentifiers,
  type PeppolParticipant,
} from './identifiers.js';
import { parseXmlDom, parseXmlElements, textContentOf, type XmlElement } from './xml-dom.js';

export const SBDH_NS = 'http://www.unece.org/cefact/namespaces/StandardBusinessDocumentHeader';

export interface SbdhFacts {
  sender: PeppolParticipant;
  receiver: PeppolParticipant;
  documentTypeId: string;
  processId: string;
  /** The seller's country (scope COUNTRY_C1), mandatory in Peppol since 2024. */
  countryC1: string;
  /** The envelope's own identifier (DocumentIdentification/InstanceIdentifier), unique per message. */
  instanceId: string;
  /** DocumentIdentification: the payload root's namespace, local name and version. */
  standard: string;
  type: string;
  typeVersion: string;
  creationDateTime: string;
}

/** Why a received envelope is refused (nothing of it is stored). */
export class SbdhError extends Error {
  override readonly name = 'SbdhError';
  constructor(
    readonly code: 'SBDH_NOT_WELL_FORMED' | 'SBDH_MISSING' | 'SBDH_FIELD_MISSING' | 'SBDH_PAYLOAD_MISSING' | 'SBDH_PAYLOAD_MISMATCH',
    message: string,
  ) {
    super(message);
  }
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Strips an XML declaration and a byte order mark from the payload (the envelope has its own). */
export function payloadBody(xml: string): string {
  return xml.replace(/^\uFEFF/, '').replace(/^\s*<\?xml[^?]*\?>\s*/, '');
}

/** The envelope around `ublXml`: facts from the document itself, plus the instance id and time. */
export function buildSbdh(
  ublXml: string,
  ids: Pick<PeppolIdentifiers, 'sender' | 'receiver' | 'documentTypeId' | 'processId' | 'rootNamespace' | 'rootName'>,
  envelope: { instanceId: string; createdAt: Date; countryC1: string },
): string {
  const typeVersion = parseDocumentTypeId(ids.documentTypeId)?.version ?? '2.1';
  const scope = (type: string, value: string, identifier?: string) =>
    `<Scope><Type>${type}</Type><InstanceIdentifier>${esc(value)}</InstanceIdentifier>${identifier ? `<Identifier>${identifier}</Identifier>` : ''}</Scope>`;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<StandardBusinessDocument xmlns="${SBDH_NS}">` +
    `<StandardBusinessDocumentHeader>` +
    `<HeaderVersion>1.0</HeaderVersion>` +
    `<Sender><Identifier Authority="${esc(ids.sender.scheme)}">${esc(ids.sender.value)}</Identifier></Sender>` +
    `<Receiver><Identifier Authority="${esc(ids.receiver.scheme)}">${esc(ids.receiver.value)}</Identifier></Receiver>` +
    `<DocumentIdentification>` +
    `<Standard>${esc(ids.rootNamespace)}</Standard><TypeVersion>${esc(typeVersion)}</TypeVersion>` +
    `<InstanceIdentifier>${esc(envelope.instanceId)}</InstanceIdentifier><Type>${esc(ids.rootName)}</Type>` +
    `<CreationDateAndTime>${envelope.createdAt.toISOString()}</CreationDateAndTime>` +
    `</DocumentIdentification>` +
    `<BusinessScope>` +
    scope('DOCUMENTID', ids.documentTypeId, DOCUMENT_TYPE_SCHEME) +
    scope('PROCESSID', ids.processId, PROCESS_SCHEME) +
    scope('COUNTRY_C1', envelope.countryC1) +
    `</BusinessScope>` +
    `</StandardBusinessDocumentHeader>` +
    payloadBody(ublXml) +
    `</StandardBusinessDocument>`
  );
}

const kids = (e: XmlElement | null | undefined, local: string): XmlElement[] => {
  const out: XmlElement[] = [];
  if (e) for (const c of e.content) if (typeof c !== 'string' && c.local === local && c.uri === SBDH_NS) out.push(c);
  return out;
};
const kid = (e: XmlElement | null | undefined, local: string) => kids(e, local)[0] ?? null;
const text = (e: XmlElement | null) => (e ? textContentOf(e).trim() || null : null);

function required(value: string | null, what: string): string {
  if (!value) throw new SbdhError('SBDH_FIELD_MISSING', `the SBDH has no ${what}`);
  return value;
}

function participant(e: XmlElement | null, what: string): PeppolParticipant {
  const id = kid(e, 'Identifier');
  return { scheme: id?.attributes.Authority || PARTICIPANT_SCHEME, value: required(text(id), `${what}/Identifier`) };
}

/** The end of the envelope: its root's end tag and white space after it (where `/<\/(?:[\w.-]+:)?StandardBusinessDocument\s*>\s*$/` matches). */
const ROOT_END = /<\/(?:[\w.-]+:)?StandardBusinessDocument\s*>\s*$/y;
function rootEndOf(text: string): { index: number; tag: string } | null {
  // Nothing after `</` in a match can be `<`: a match can only start at the last `</` of the text.
  const at = text.lastIndexOf('</');
  if (at < 0) return null;
  ROOT_END.lastIndex = at;
  const m = ROOT_END.exec(text);
  return m ? { index: at, tag: m[0] } : null;
}

export interface ParsedSbd {
  facts: SbdhFacts;
  /** The payload's exact bytes as carried in the envelope. */
  payload: Buffer;
  /** The payload's own identifiers (read from the UBL). */
  payloadIds: PeppolIdentifiers;
}

/**
 * Reads a Standard Business Document and checks it against its payload: the payload is the UBL
 * document the header names (root, document type, process) and is addressed to the header's
 * receiver. The payload's bytes are cut from the envelope as sent.
 *
 * `readPayload`, when given, is offered the payload cut from the envelope first: the identifiers
 * it returns stand for `peppolIdentifiersOf`'s (a caller that parses the payload anyway reads
 * them from its own parse; it must return exactly what `peppolIdentifiersOf` would, or null to
 * leave the reading to it). Those bytes are the returned `payload` whenever it was called and
 * the envelope did not have to be read whole.
 */
export function parseSbd(bytes: Buffer, readPayload?: (payload: Buffer) => PeppolIdentifiers | null): ParsedSbd {
  const textBody = bytes.toString('utf8');
  if (/<!DOCTYPE/i.test(textBody)) throw new SbdhError('SBDH_NOT_WELL_FORMED', 'the envelope declares a DOCTYPE');
  // Fast path: the header alone is parsed, the payload is cut from the text as it is and read by a
  // streaming parser; an envelope that does not split so is parsed whole. The header is read as a
  // plain tree of elements and text (./xml-dom.ts `parseXmlElements`: the same parser and checks
  // as the DOM, without building one).
  const headerEnd = /<\/(?:[\w.-]+:)?StandardBusinessDocumentHeader\s*>/.exec(textBody);
  const rootEnd = rootEndOf(textBody);
  let root: XmlElement | null = null;
  let cut: string | null = null;
  if (headerEnd && rootEnd && rootEnd.index > headerEnd.index) {
    try {
      root = parseXmlElements(textBody.slice(0, headerEnd.index + headerEnd[0].length) + rootEnd.tag);
      cut = textBody.slice(headerEnd.index + headerEnd[0].length, rootEnd.index).trim();
    } catch {
      root = null;
    }
  }
  let whole: Document | null = null;
  if (!root) {
    try {
      whole = parseXmlDom(textBody);
      root = parseXmlElements(textBody);
    } catch (err) {
      throw new SbdhError('SBDH_NOT_WELL_FORMED', `the envelope is not well-formed XML: ${(err as Error).message}`);
    }
  }
  if (root.local !== 'StandardBusinessDocument' || root.uri !== SBDH_NS) throw new SbdhError('SBDH_MISSING', `the payload is not a Standard Business Document (root ${root.local})`);
  const header = kid(root, 'StandardBusinessDocumentHeader');
  if (!header) throw new SbdhError('SBDH_MISSING', 'the Standard Business Document has no header');
  const ident = kid(header, 'DocumentIdentification');
  const scopes = new Map<string, string>();
  for (const s of kids(kid(header, 'BusinessScope'), 'Scope')) {
    const type = text(kid(s, 'Type'));
    const value = text(kid(s, 'InstanceIdentifier'));
    if (type && value && !scopes.has(type)) scopes.set(type, value);
  }
  const facts: SbdhFacts = {
    sender: participant(kid(header, 'Sender'), 'Sender'),
    receiver: participant(kid(header, 'Receiver'), 'Receiver'),
    documentTypeId: required(scopes.get('DOCUMENTID') ?? null, 'DOCUMENTID scope'),
    processId: required(scopes.get('PROCESSID') ?? null, 'PROCESSID scope'),
    countryC1: required(scopes.get('COUNTRY_C1') ?? null, 'COUNTRY_C1 scope'),
    instanceId: required(text(kid(ident, 'InstanceIdentifier')), 'DocumentIdentification/InstanceIdentifier'),
    standard: required(text(kid(ident, 'Standard')), 'DocumentIdentification/Standard'),
    type: required(text(kid(ident, 'Type')), 'DocumentIdentification/Type'),
    typeVersion: required(text(kid(ident, 'TypeVersion')), 'DocumentIdentification/TypeVersion'),
    creationDateTime: required(text(kid(ident, 'CreationDateAndTime')), 'DocumentIdentification/CreationDateAndTime'),
  };
  let payload: Buffer | null = null;
  let payloadIds: PeppolIdentifiers | null = null;
  if (cut) {
    try {
      const cutBytes = Buffer.from(cut, 'utf8');
      payloadIds = readPayload?.(cutBytes) ?? peppolIdentifiersOf(cut);
      payload = cutBytes;
    } catch {
      // Not a UBL document standing on its own (a namespace of the envelope?): read the whole envelope.
    }
  }
  if (!payload) {
    try {
      whole ??= parseXmlDom(textBody);
    } catch (err) {
      throw new SbdhError('SBDH_NOT_WELL_FORMED', `the envelope is not well-formed XML: ${(err as Error).message}`);
    }
    let wholeHeader: Element | null = null;
    for (let n = whole.documentElement?.firstChild; n; n = n.nextSibling) {
      if (n.nodeType === 1 && (n as Element).localName === 'StandardBusinessDocumentHeader' && (n as Element).namespaceURI === SBDH_NS) {
        wholeHeader = n as Element;
        break;
      }
    }
    let payloadEl: Element | null = null;
    for (let n = wholeHeader?.nextSibling; n; n = n.nextSibling) {
      if (n.nodeType === 1) {
        payloadEl = n as Element;
        break;
      }
    }
    if (!payloadEl) throw new SbdhError('SBDH_PAYLOAD_MISSING', 'the Standard Business Document carries no payload');
    payload = Buffer.from(new XMLSerializer().serializeToString(payloadEl), 'utf8');
    try {
      payloadIds = peppolIdentifiersOf(payload);
    } catch (err) {
      if (err instanceof PeppolIdentifierError) throw new SbdhError('SBDH_PAYLOAD_MISMATCH', `the payload cannot be routed: ${err.message}`);
      throw err;
    }
  }
  if (!payloadIds) throw new SbdhError('SBDH_PAYLOAD_MISSING', 'the Standard Business Document carries no payload');
  const mismatch = (what: string, header: string, payloadValue: string) => new SbdhError('SBDH_PAYLOAD_MISMATCH', `the SBDH ${what} ${header} differs from the payload's ${payloadValue}`);
  if (facts.standard !== payloadIds.rootNamespace || facts.type !== payloadIds.rootName) throw mismatch('document', `${facts.standard}::${facts.type}`, `${payloadIds.rootNamespace}::${payloadIds.rootName}`);
  if (facts.documentTypeId !== payloadIds.documentTypeId) throw mismatch('DOCUMENTID', facts.documentTypeId, payloadIds.documentTypeId);
  if (facts.processId !== payloadIds.processId) throw mismatch('PROCESSID', facts.processId, payloadIds.processId);
  if (!sameParticipant(facts.receiver, payloadIds.receiver)) throw mismatch('receiver', facts.receiver.value, `buyer endpoint ${payloadIds.receiver.value}`);
  return { facts, payload, payloadIds };
}
