/**
 * Peppol identifiers of a UBL document: the participants (sender and receiver endpoint ids with
 * their ISO 6523 / EAS scheme), the document type (root namespace, root name, customization and
 * UBL version, in the `busdox-docid-qns` scheme) and the process (the profile, in the
 * `cenbii-procid-ubl` scheme), as Peppol's policy for identifiers spells them. Pure.
 */
import type { Document, Element } from '@xmldom/xmldom';
import { DOMParser } from '@xmldom/xmldom';
import { SaxesParser } from 'saxes';

export const PARTICIPANT_SCHEME = 'iso6523-actorid-upis';
export const DOCUMENT_TYPE_SCHEME = 'busdox-docid-qns';
export const PROCESS_SCHEME = 'cenbii-procid-ubl';

export interface PeppolParticipant {
  scheme: string;
  /** `<EAS code>:<identifier>`, e.g. `0208:0123456789`. */
  value: string;
}

export interface PeppolIdentifiers {
  sender: PeppolParticipant;
  receiver: PeppolParticipant;
  documentTypeId: string;
  processId: string;
  /** The root element's namespace and local name (the SBDH's DocumentIdentification standard and type). */
  rootNamespace: string;
  rootName: string;
  customizationId: string;
  /** Seller's country (the SBDH's COUNTRY_C1), from the supplier's postal address, or null. */
  sellerCountry: string | null;
}

/** Why a document cannot be sent over Peppol (one line). */
export class PeppolIdentifierError extends Error {
  override readonly name = 'PeppolIdentifierError';
  constructor(
    readonly code: 'PEPPOL_DOCUMENT_NOT_UBL' | 'PEPPOL_CUSTOMIZATION_MISSING' | 'PEPPOL_PROFILE_MISSING' | 'PEPPOL_SENDER_ENDPOINT_MISSING' | 'PEPPOL_RECEIVER_ENDPOINT_MISSING',
    message: string,
  ) {
    super(message);
  }
}

const UBL_VERSION = '2.1';
const CBC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2';
const CAC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2';
const UBL_ROOTS: Record<string, string> = {
  Invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  CreditNote: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
  // The buyer's answer (Peppol Invoice Response): its parties are SenderParty and ReceiverParty.
  ApplicationResponse: 'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2',
};

/** `urn:…:Invoice-2::Invoice##<customization>::2.1` */
export const documentTypeIdOf = (rootNamespace: string, rootName: string, customizationId: string): string =>
  `${rootNamespace}::${rootName}##${customizationId}::${UBL_VERSION}`;

/** Splits a document type id into root namespace, root name and customization (null: not of that form). */
export function parseDocumentTypeId(id: string): { rootNamespace: string; rootName: string; customizationId: string; version: string } | null {
  const m = /^(.+)::([A-Za-z][\w.-]*)##(.+)::([^:]+)$/.exec(id);
  return m ? { rootNamespace: m[1]!, rootName: m[2]!, customizationId: m[3]!, version: m[4]! } : null;
}

export const participantOf = (scheme: string | null, value: string): PeppolParticipant => ({
  scheme: PARTICIPANT_SCHEME,
  value: scheme && !value.startsWith(`${scheme}:`) ? `${scheme}:${value}` : value,
});

/** Participant ids compare case-insensitively (Peppol policy for identifiers). */
export const sameParticipant = (a: PeppolParticipant, b: PeppolParticipant): boolean =>
  a.scheme.toLowerCase() === b.scheme.toLowerCase() && a.value.toLowerCase() === b.value.toLowerCase();

/** Thrown to stop a scan once everything needed was read (UBL puts both parties before the lines): no Error, so no stack is captured. */
const ENOUGH = Symbol('enough');

const LINES: ReadonlySet<string> = new Set(['InvoiceLine', 'CreditNoteLine']);

/**
 * The identifiers of a UBL Invoice, CreditNote or ApplicationResponse (Invoice Response), read from its own header elements in one
 * namespace-aware saxes pass that stops at the first line (what is read must be well-formed).
 */
export function peppolIdentifiersOf(xml: string | Uint8Array): PeppolIdentifiers {
  const text = typeof xml === 'string' ? xml : Buffer.from(xml).toString('utf8');
  if (/<!DOCTYPE/i.test(text)) throw new PeppolIdentifierError('PEPPOL_DOCUMENT_NOT_UBL', 'the document declares a DOCTYPE');
  const parser = new SaxesParser({ xmlns: true });
  // The open elements' paths below the root (`ns|local/ns|local…`), one string per depth: each
  // built once from its parent's, not joined again at every tag.
  const path: string[] = [];
  let rootNs: string | null = null;
  let rootName: string | null = null;
  const found: Record<string, string> = {};
  const schemes: Record<string, string | null> = {};
  let capture: string | null = null;
  let buffer = '';
  const WANTED: Record<string, string> = {
    [`${CBC}|CustomizationID`]: 'customization',
    [`${CBC}|ProfileID`]: 'profile',
    [`${CAC}|AccountingSupplierParty/${CAC}|Party/${CBC}|EndpointID`]: 'sender',
    [`${CAC}|AccountingCustomerParty/${CAC}|Party/${CBC}|EndpointID`]: 'receiver',
    [`${CAC}|SenderParty/${CBC}|EndpointID`]: 'sender',
    [`${CAC}|ReceiverParty/${CBC}|EndpointID`]: 'receiver',
    [`${CAC}|AccountingSupplierParty/${CAC}|Party/${CAC}|PostalAddress/${CAC}|Country/${CBC}|IdentificationCode`]: 'country',
  };
  parser.on('opentag', (tag) => {
    const ns = tag.uri ?? '';
    if (path.length === 0) {
      rootNs = ns;
      rootName = tag.local;
      if (UBL_ROOTS[tag.local] !== ns) throw new PeppolIdentifierError('PEPPOL_DOCUMENT_NOT_UBL', `the root element ${tag.local} is not a UBL 2.1 Invoice, CreditNote or ApplicationResponse`);
    } else if (path.length === 1 && LINES.has(tag.local)) {
      throw ENOUGH;
    }
    path.push(path.length === 0 ? '' : path.length === 1 ? `${ns}|${tag.local}` : `${path[path.length - 1]}/${ns}|${tag.local}`);
    const key = WANTED[path[path.length - 1]!];
    if (key && found[key] === undefined) {
      capture = key;
      buffer = '';
      const attrs = tag.attributes as Record<string, { value: string; local: string; uri: string }>;
      schemes[key] = Object.values(attrs).find((a) => a.local === 'schemeID' && !a.uri)?.value ?? null;
    }
  });
  parser.on('text', (t) => {
    if (capture) buffer += t;
  });
  parser.on('closetag', () => {
    if (capture && WANTED[path[path.length - 1]!] === capture) {
      const v = buffer.trim();
      if (v) found[capture] = v;
      capture = null;
    }
    path.pop();
  });
  try {
    parser.write(text).close();
  } catch (err) {
    if (err !== ENOUGH) {
      if (err instanceof PeppolIdentifierError) throw err;
      throw new PeppolIdentifierError('PEPPOL_DOCUMENT_NOT_UBL', `the document is not well-formed XML: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  if (!rootName || !rootNs) throw new PeppolIdentifierError('PEPPOL_DOCUMENT_NOT_UBL', 'the document has no root element');
  return peppolIdentifiersFrom({ rootNamespace: rootNs, rootName, customizationId: found.customization, profileId: found.profile, sender: found.sender, senderScheme: schemes.sender ?? null, receiver: found.receiver, receiverScheme: schemes.receiver ?? null, sellerCountry: found.country });
}

/**
 * The values a UBL document is routed by, as read from it by whatever parsed it (each the first
 * non-empty text of its element, trimmed; undefined when absent or empty).
 */
export interface UblRoutingValues {
  rootNamespace: string;
  rootName: string;
  customizationId: string | undefined;
  profileId: string | undefined;
  sender: string | undefined;
  senderScheme: string | null;
  receiver: string | undefined;
  receiverScheme: string | null;
  sellerCountry: string | undefined;
}

/** The Peppol identifiers of those values; throws PeppolIdentifierError for what is missing, as `peppolIdentifiersOf` does. */
export function peppolIdentifiersFrom(v: UblRoutingValues): PeppolIdentifiers {
  const { rootNamespace: rootNs, rootName } = v;
  if (UBL_ROOTS[rootName] !== rootNs) throw new PeppolIdentifierError('PEPPOL_DOCUMENT_NOT_UBL', `the root element ${rootName} is not a UBL 2.1 Invoice, CreditNote or ApplicationResponse`);
  const found = { customization: v.customizationId, profile: v.profileId, sender: v.sender, receiver: v.receiver, country: v.sellerCountry };
  const schemes = { sender: v.senderScheme, receiver: v.receiverScheme };
  const customizationId = found.customization;
  if (!customizationId) throw new PeppolIdentifierError('PEPPOL_CUSTOMIZATION_MISSING', 'the document has no cbc:CustomizationID: its Peppol document type is unknown');
  const processId = found.profile;
  if (!processId) throw new PeppolIdentifierError('PEPPOL_PROFILE_MISSING', 'the document has no cbc:ProfileID: its Peppol process is unknown');
  if (!found.sender) throw new PeppolIdentifierError('PEPPOL_SENDER_ENDPOINT_MISSING', 'the seller has no cbc:EndpointID: the sending participant is unknown');
  if (!found.receiver) throw new PeppolIdentifierError('PEPPOL_RECEIVER_ENDPOINT_MISSING', 'the buyer has no cbc:EndpointID: the receiving participant is unknown');
  return {
    sender: participantOf(schemes.sender ?? null, found.sender),
    receiver: participantOf(schemes.receiver ?? null, found.receiver),
    documentTypeId: documentTypeIdOf(rootNs, rootName, customizationId),
    processId,
    rootNamespace: rootNs,
    rootName,
    customizationId,
    sellerCountry: found.country ? found.country.toUpperCase() : null,
  };
}

/** Parses XML text with xmldom, turning its warnings and errors into an exception. */
export function parseXml(text: string): Document {
  let failure: string | null = null;
  const parser = new DOMParser({
    onError: (level, message) => {
      if (level !== 'warning') failure ??= message;
    },
  });
  const doc = parser.parseFromString(text, 'application/xml');
  if (failure) throw new Error(String(failure).split('\n')[0]);
  if (!doc.documentElement) throw new Error('no root element');
  return doc;
}
