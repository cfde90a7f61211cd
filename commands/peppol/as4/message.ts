/**
 * AS4 messages on the wire (SOAP 1.2, Peppol AS4 profile): the outbound user message as
 * `multipart/related` (the SOAP envelope, then the payload gzip-compressed and AES-128-GCM
 * encrypted as one binary attachment; signed, then encrypted), the signed signals the receiving
 * side answers with (receipt with non-repudiation information, or ebMS errors), and the parsing of
 * both directions. MIME parts are read with @mjackson/multipart-parser; XML with xmldom.
 */
import type { Document, Element } from '@xmldom/xmldom';
import { gzipSync, gunzipSync } from 'node:zlib';
import { randomUUID } from 'node:crypto';
import { parseMultipart, getMultipartBoundary, MultipartParseError, type MultipartPart } from '@mjackson/multipart-parser';
import { NS, userMessage, receiptSignal, errorSignalXml, type UserMessageHeader, type EbmsError, type SignedReference } from '../../../domain/peppol/ebms.js';
import { parseXmlDom } from '../../../domain/peppol/xml-dom.js';
import { bstXml, encryptAttachment, encryptionXml, signReferences, wrapKey } from './wss.js';

export interface SigningIdentity {
  privateKeyPem: string;
  certificatePem: string;
  commonName: string;
}

export interface BuiltMessage {
  messageId: string;
  contentType: string;
  body: Buffer;
  /** The signature's references as sent (a receipt must repeat their digests). */
  references: { uri: string; digest: string }[];
}

const envelopeXml = (security: string, messaging: string, bodyId: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>` +
  `<S12:Envelope xmlns:S12="${NS.soap}">` +
  `<S12:Header>` +
  `<wsse:Security xmlns:wsse="${NS.wsse}" xmlns:wsu="${NS.wsu}" S12:mustUnderstand="true">${security}</wsse:Security>` +
  messaging +
  `</S12:Header>` +
  `<S12:Body xmlns:wsu="${NS.wsu}" wsu:Id="${bodyId}"/>` +
  `</S12:Envelope>`;

/** The empty Body of `envelopeXml` in exclusive C14N form (proved by test/peppol/as4-canonical.test.ts). */
export const bodyCanonical = (bodyId: string) => `<S12:Body xmlns:S12="${NS.soap}" xmlns:wsu="${NS.wsu}" wsu:Id="${bodyId}"></S12:Body>`;

const firstNs = (doc: Document, ns: string, local: string): Element | null => doc.getElementsByTagNameNS(ns, local).item(0);

/**
 * The signed, encrypted user message carrying `payload` (the SBDH document) to the receiver's
 * certificate. The same header (message id) gives the same message identity on every send.
 */
export function buildUserMessage(header: Omit<UserMessageHeader, 'payloadContentId'>, payload: Uint8Array, sender: SigningIdentity, receiverCertificatePem: string): BuiltMessage {
  const u = randomUUID();
  const ids = { messaging: `phase4-msg-${u}`, body: `id-${u}`, senderBst: `X509-s-${u}`, receiverBst: `X509-r-${u}`, ek: `EK-${u}`, ed: `ED-${u}`, sig: `SIG-${u}` };
  const contentId = `${u}@payload`;
  // Level 3 (zlib's fast deflate): a third of the default level's CPU for a few per cent more bytes.
  const compressed = gzipSync(payload, { level: 3 });
  const messaging = userMessage({ ...header, payloadContentId: contentId }, ids.messaging);
  // Sign first (over the compressed attachment), then encrypt the attachment. The header and the
  // Body were written here in their canonical form: digested as they stand, not parsed back.
  const signature = signReferences(
    [
      { uri: `#${ids.messaging}`, target: { canonical: messaging.canonical } },
      { uri: `#${ids.body}`, target: { canonical: bodyCanonical(ids.body) } },
      { uri: `cid:${contentId}`, target: compressed },
    ],
    sender.privateKeyPem,
    ids.senderBst,
    ids.sig,
  );
  const { key, cipher } = encryptAttachment(compressed);
  const security =
    bstXml(ids.receiverBst, receiverCertificatePem) +
    encryptionXml({ wrappedKey: wrapKey(key, receiverCertificatePem), receiverBstId: ids.receiverBst, encryptedKeyId: ids.ek, encryptedDataId: ids.ed, contentId, mimeType: 'application/gzip' }) +
    bstXml(ids.senderBst, sender.certificatePem) +
    signature.xml;
  const soap = envelopeXml(security, messaging.xml, ids.body);
  const boundary = `----=_Part_${randomUUID()}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Type: application/soap+xml;charset=UTF-8\r\nContent-Transfer-Encoding: binary\r\n\r\n${soap}\r\n` +
        `--${boundary}\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\nContent-Description: Attachment\r\nContent-ID: <${contentId}>\r\n\r\n`,
      'utf8',
    ),
    cipher,
    Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8'),
  ]);
  return {
    messageId: header.messageId,
    contentType: `multipart/related; boundary="${boundary}"; type="application/soap+xml"; charset=UTF-8`,
    body,
    references: signature.references.map(({ uri, digest }) => ({ uri, digest })),
  };
}

/**
 * A signed signal envelope (receipt or errors): references to eb:Messaging and the Body.
 * `messaging` gives the header as sent and, when it can, in its exclusive C14N form (digested as
 * it stands); without it the header is parsed back and canonicalised.
 */
function signedSignal(messaging: (wsuId: string) => { xml: string; canonical: string | null }, identity: SigningIdentity): string {
  const u = randomUUID();
  const ids = { messaging: `phase4-msg-${u}`, body: `id-${u}`, bst: `X509-${u}`, sig: `SIG-${u}` };
  const header = messaging(ids.messaging);
  // Parsed back only to canonicalise eb:Messaging when its canonical form is not known; with the
  // saxes builder, the same tree as DOMParser's at half the cost.
  const target = header.canonical !== null ? { canonical: header.canonical } : firstNs(parseXmlDom(envelopeXml('', header.xml, ids.body)), NS.eb, 'Messaging')!;
  const signature = signReferences(
    [
      { uri: `#${ids.messaging}`, target },
      { uri: `#${ids.body}`, target: { canonical: bodyCanonical(ids.body) } },
    ],
    identity.privateKeyPem,
    ids.bst,
    ids.sig,
  );
  return envelopeXml(bstXml(ids.bst, identity.certificatePem) + signature.xml, header.xml, ids.body);
}

/** A signed receipt; its eb:Messaging is digested in the canonical form it was written in (domain/peppol/ebms.ts `receiptSignal`). */
export const receiptEnvelope = (identity: SigningIdentity, r: { refToMessageId: string; references: readonly SignedReference[]; timestamp: string }) =>
  signedSignal((id) => receiptSignal({ ...r, messageId: `${randomUUID()}@receipt` }, id), identity);

export const errorEnvelope = (identity: SigningIdentity, r: { refToMessageId: string | null; errors: readonly EbmsError[]; timestamp: string }) =>
  signedSignal((id) => ({ xml: errorSignalXml({ ...r, messageId: `${randomUUID()}@error` }, id), canonical: null }), identity);

// ---- reading ------------------------------------------------------------------------------

/** Why an HTTP body is not an AS4 message (answered with EBMS:0007 / EBMS:0009). */
export class PackagingError extends Error {
  override readonly name = 'PackagingError';
  constructor(
    readonly kind: 'MIME_INCONSISTENCY' | 'INVALID_HEADER',
    message: string,
  ) {
    super(message);
  }
}

export interface ReadMessage {
  doc: Document;
  /** Attachments by Content-ID (without angle brackets), as received. */
  attachments: Map<string, Uint8Array>;
}

const stripCid = (id: string) => id.trim().replace(/^<|>$/g, '');

/** A part's Content-ID header. The parser decodes a part's header block as strict UTF-8 when it is first read. */
function contentIdOf(part: MultipartPart): string | null {
  try {
    return part.headers.get('content-id');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_ENCODING_INVALID_ENCODED_DATA') throw new PackagingError('MIME_INCONSISTENCY', 'the MIME header of an attachment is not valid UTF-8');
    throw err;
  }
}

/**
 * Reads an AS4 HTTP body: a SOAP 1.2 envelope alone, or `multipart/related` with attachments.
 * `parse` builds the envelope's DOM: by default domain/peppol/xml-dom.ts (the same tree as xmldom's
 * DOMParser, proven node for node, built from saxes' events at half the cost), for the messages
 * received and the answers read alike.
 */
export function readHttpMessage(contentType: string | undefined, body: Buffer, limits: { maxPartBytes: number }, parse: (text: string) => Document = parseXmlDom): ReadMessage {
  const type = (contentType ?? '').toLowerCase();
  let soap: Uint8Array;
  const attachments = new Map<string, Uint8Array>();
  if (type.startsWith('multipart/related')) {
    const boundary = getMultipartBoundary(contentType!);
    if (!boundary) throw new PackagingError('MIME_INCONSISTENCY', 'the multipart/related content type has no boundary');
    let first: Uint8Array | null = null;
    // A preamble before the first boundary (RFC 2046; phase4 sends a CRLF there) is skipped.
    const start = body.indexOf(`--${boundary}`);
    if (start < 0) throw new PackagingError('MIME_INCONSISTENCY', 'the multipart/related body has no boundary line');
    const parts = start > 0 ? body.subarray(start) : body;
    try {
      for (const part of parseMultipart(parts, { boundary, maxFileSize: limits.maxPartBytes, maxHeaderSize: 8 * 1024 })) {
        if (first === null) {
          first = part.bytes;
          continue;
        }
        const cid = contentIdOf(part);
        if (!cid) throw new PackagingError('MIME_INCONSISTENCY', 'an attachment has no Content-ID');
        attachments.set(stripCid(cid), part.bytes);
      }
    } catch (err) {
      if (err instanceof MultipartParseError) throw new PackagingError('MIME_INCONSISTENCY', `the MIME body cannot be read: ${err.message}`);
      throw err;
    }
    if (!first) throw new PackagingError('MIME_INCONSISTENCY', 'the multipart/related body has no parts');
    soap = first;
  } else if (type.startsWith('application/soap+xml')) {
    soap = body;
  } else {
    throw new PackagingError('MIME_INCONSISTENCY', `content type ${contentType ?? '(none)'} is neither multipart/related nor application/soap+xml`);
  }
  const text = Buffer.from(soap.buffer, soap.byteOffset, soap.byteLength).toString('utf8');
  if (/<!DOCTYPE/i.test(text)) throw new PackagingError('INVALID_HEADER', 'the SOAP envelope declares a DOCTYPE');
  let doc: Document;
  try {
    doc = parse(text);
  } catch (err) {
    throw new PackagingError('INVALID_HEADER', `the SOAP envelope is not well-formed XML: ${(err as Error).message}`);
  }
  const root = doc.documentElement!;
  if (root.localName !== 'Envelope' || root.namespaceURI !== NS.soap) throw new PackagingError('INVALID_HEADER', 'the message is not a SOAP 1.2 envelope');
  return { doc, attachments };
}

/** The decoded `cid:` reference (RFC 2392 URLs are %-encoded). */
export function cidOf(href: string): string {
  const raw = href.replace(/^cid:/, '');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Gunzips with a bound on the output (a compression bomb is refused). */
export function gunzipBounded(bytes: Uint8Array, maxBytes: number): Buffer {
  return gunzipSync(bytes, { maxOutputLength: maxBytes });
}

/** The first child element of `parent` with that namespace and local name. */
const childNs = (parent: Element | null | undefined, ns: string, local: string): Element | null => {
  for (let n = parent?.firstChild; n; n = n.nextSibling) if (n.nodeType === 1 && (n as Element).localName === local && (n as Element).namespaceURI === ns) return n as Element;
  return null;
};

/** A header block of the SOAP envelope: a child of its Header, itself a child of the Envelope (no walk through the whole document). */
export const header = (doc: Document, ns: string, local: string): Element | null => childNs(childNs(doc.documentElement, NS.soap, 'Header'), ns, local);

/** The SOAP Body: the Envelope's own child. */
export const bodyOf = (doc: Document): Element | null => childNs(doc.documentElement, NS.soap, 'Body');
