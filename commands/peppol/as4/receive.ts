/**
 * The receiving side of the access point (corner 3): one AS4 request in, one signed answer out.
 * Checks in order — MIME and SOAP packaging, the ebMS header (Peppol agreement, one payload),
 * decryption of the attachment with this access point's key, the signature over eb:Messaging,
 * the Body and the attachment, the signer's certificate (chain to a trusted Peppol CA, validity;
 * the sending party is its CN), decompression, the SBDH against the ebMS header and the payload
 * — and only then hands the document to `accept`, which stores it durably. The receipt (with the
 * non-repudiation information of the signed parts) is built after `accept` returned; every
 * refusal is an ebMS error signal, signed, with HTTP 200.
 */
import { ebmsError, EbmsHeaderError, readUserMessage, actionDocumentTypeId, NS, type EbmsError, type EbmsErrorKind, type ReadUserMessage, type SignedReference } from '../../../domain/peppol/ebms.js';
import { peppolIdentifiersFrom, sameParticipant, type PeppolIdentifiers } from '../../../domain/peppol/identifiers.js';
import { parseSbd, SbdhError, type ParsedSbd } from '../../../domain/peppol/sbdh.js';
import { checkReceivedDocument, checkReceivedDocumentNow, ImportRefused, type CheckedDocument } from '../../purchases/check.js';
import { loadUblSchemaChecker } from '../../purchases/xsd.js';
import { bodyOf, cidOf, errorEnvelope, gunzipBounded, header, PackagingError, readHttpMessage, receiptEnvelope } from './message.js';
import type { AccessPointIdentity, PeppolTrust } from './types.js';
import { decryptAttachments, indexIds, verifySignature, WssError, idOf } from './wss.js';

/** The import's content checks of the payload, when they were run with the message's own checks. */
export type DocumentCheck = { kind: 'checked'; document: CheckedDocument } | { kind: 'refused'; code: string; message: string };

export interface InboundMessage {
  messageId: string;
  conversationId: string | null;
  sendingAccessPoint: string;
  sbd: ParsedSbd;
  /** The purchases import's checks of `sbd.payload`, already run (off the main thread); else the acceptor runs them. */
  document?: DocumentCheck;
}

export type Acceptance = { kind: 'stored' | 'duplicate'; documentIds: string[] } | { kind: 'refused'; error: EbmsErrorKind; description: string };

/**
 * The CPU-bound part of receiving, off the main thread (./receive-pool.ts): the message's checks
 * up to the SBDH, and the signing of the answers. Every result crosses a thread boundary, so it
 * is plain data.
 */
export interface As4Offload {
  check(contentType: string | undefined, body: Buffer): Promise<As4Check>;
  receipt(r: { refToMessageId: string; references: readonly SignedReference[]; timestamp: string }): Promise<string>;
  error(r: { refToMessageId: string | null; errors: readonly EbmsError[]; timestamp: string }): Promise<string>;
}

export interface ReceiveDeps {
  identity: AccessPointIdentity;
  trust: PeppolTrust;
  now: () => Date;
  /** Largest decompressed payload accepted. */
  maxPayloadBytes: number;
  /**
   * The purchases import's size limit: with it, the import's content checks run with the
   * message's own (the payload parsed once for both); without it, the acceptor runs them.
   */
  maxXmlBytes?: number;
  /** Stores the document durably (or finds it stored before); refuses an unknown receiver. */
  accept(message: InboundMessage): Promise<Acceptance>;
  /** Runs the CPU-bound steps on a worker pool; absent: on the calling thread. */
  offload?: As4Offload | null;
}

export interface As4Answer {
  status: number;
  contentType: string;
  body: string;
  /** What happened, for logs and metrics (`busy`: the worker pool's queue was full, HTTP 503, nothing read). */
  outcome: 'stored' | 'duplicate' | 'refused' | 'busy';
  messageId: string | null;
  error?: EbmsError;
}

/**
 * What the checks that need no trust store, no clock and no database say of one AS4 request, in
 * the order they run: a refusal before the signature is known good (packaging, ebMS header,
 * decryption, signature), else the signer and the signed references, with the outcome of the
 * checks after the signer's certificate (decompression, SBDH, the SBDH against the ebMS header)
 * to be taken only once that certificate is trusted.
 */
export type As4Check =
  | { kind: 'refused'; messageId: string | null; error: EbmsError }
  | {
      kind: 'signed';
      user: { messageId: string; conversationId: string | null; fromParty: string | null };
      certificatePem: string;
      references: { uri: string; digest: string; xml: string }[];
      after: { kind: 'refused'; error: EbmsError } | { kind: 'ok'; sbd: ParsedSbd; document?: DocumentCheck };
    };

/** The worker pool's queue is full: the message is not read (HTTP 503; the sender retries). */
export class As4Busy extends Error {
  override readonly name = 'As4Busy';
}

class Refusal extends Error {
  constructor(readonly error: EbmsError) {
    super(error.description);
  }
}

const SOAP = 'application/soap+xml;charset=UTF-8';

/**
 * The checks of one AS4 request that need only this access point's key (see `As4Check`). With
 * `maxXmlBytes`, an Invoice or CreditNote payload also goes through the purchases import's
 * content checks (commands/purchases/check.ts), so that the acceptor does not run them again.
 */
export async function checkAs4Request(
  keys: { privateKeyPem: string; maxPayloadBytes: number; maxXmlBytes?: number },
  contentType: string | undefined,
  body: Uint8Array,
): Promise<As4Check> {
  let messageId: string | null = null;
  const refuse = (kind: EbmsErrorKind, description: string) => new Refusal(ebmsError(kind, description, messageId));
  let read;
  let user: ReadUserMessage;
  let plain: Buffer;
  let verified;
  try {
    try {
      read = readHttpMessage(contentType, Buffer.from(body.buffer, body.byteOffset, body.byteLength), { maxPartBytes: keys.maxPayloadBytes + 64 * 1024 });
    } catch (err) {
      if (err instanceof PackagingError) throw refuse(err.kind, err.message);
      throw err;
    }
    const { doc, attachments } = read;
    const messaging = header(doc, NS.eb, 'Messaging');
    if (!messaging) throw refuse('INVALID_HEADER', 'the SOAP header has no eb:Messaging');
    try {
      user = readUserMessage(messaging);
    } catch (err) {
      if (err instanceof EbmsHeaderError) {
        messageId = err.messageId;
        throw refuse(err.kind, err.message);
      }
      throw err;
    }
    messageId = user.messageId;
    const security = header(doc, NS.wsse, 'Security');
    const signature = security?.getElementsByTagNameNS(NS.ds, 'Signature').item(0);
    if (!security || !signature) throw refuse('FAILED_DECRYPTION', 'the message is not signed (no wsse:Security signature)');
    const cid = cidOf(user.parts[0]!.href);
    try {
      // The envelope's ids indexed once, for the decryption and the signature alike.
      const byId = indexIds(doc);
      const decrypted = decryptAttachments(doc, security, keys.privateKeyPem, (id) => attachments.get(id) ?? null, byId);
      const part = decrypted.get(cid);
      if (!part) throw new WssError('POLICY_NONCOMPLIANCE', `the payload ${user.parts[0]!.href} is not encrypted`);
      verified = verifySignature(doc, signature, (id) => (id === cid ? part.bytes : null), byId);
      if (!verified.signedIds.has(idOf(messaging) ?? '')) throw new WssError('POLICY_NONCOMPLIANCE', 'eb:Messaging is not signed');
      // The SOAP Body: the Envelope's own child (not the first element of that name anywhere in the document).
      const bodyEl = bodyOf(doc);
      if (!bodyEl || !verified.signedIds.has(idOf(bodyEl) ?? '')) throw new WssError('POLICY_NONCOMPLIANCE', 'the SOAP Body is not signed');
      if (!verified.references.some((r) => r.uri.startsWith('cid:'))) throw new WssError('POLICY_NONCOMPLIANCE', 'the payload attachment is not signed');
      plain = part.bytes;
    } catch (err) {
      // Every WS-Security failure is reported as EBMS:0102, as Peppol access points do; the description says which.
      if (err instanceof WssError) throw refuse('FAILED_DECRYPTION', err.message);
      throw err;
    }
  } catch (err) {
    if (err instanceof Refusal) return { kind: 'refused', messageId, error: err.error };
    throw err;
  }
  const signed = { user: { messageId: user.messageId, conversationId: user.conversationId, fromParty: user.fromParty }, certificatePem: verified.certificatePem, references: verified.references };
  try {
    let sbdBytes: Buffer;
    try {
      sbdBytes = gunzipBounded(plain, keys.maxPayloadBytes);
    } catch (err) {
      throw refuse('DECOMPRESSION_FAILURE', `the payload does not decompress as gzip within ${keys.maxPayloadBytes} bytes: ${(err as Error).message}`);
    }
    // With the import's checks: they read the payload cut from the SBDH first, and their parse
    // gives the payload's Peppol identifiers too (read once, not once more by peppolIdentifiersOf);
    // a payload they refuse is read by peppolIdentifiersOf, so the SBDH's answers do not change.
    let early: { bytes: Uint8Array; result: DocumentCheck } | null = null;
    const maxXmlBytes = keys.maxXmlBytes;
    let readPayload: ((payload: Buffer) => PeppolIdentifiers | null) | undefined;
    if (maxXmlBytes !== undefined) {
      await loadUblSchemaChecker();
      readPayload = (payload) => {
        let result: DocumentCheck;
        try {
          result = { kind: 'checked', document: checkReceivedDocumentNow(payload, maxXmlBytes) };
        } catch (err) {
          if (!(err instanceof ImportRefused)) throw err;
          result = { kind: 'refused', code: err.code, message: err.message };
        }
        early = { bytes: payload, result };
        const routing = result.kind === 'checked' ? result.document.routing : null;
        if (!routing) return null;
        try {
          return peppolIdentifiersFrom(routing);
        } catch {
          return null; // peppolIdentifiersOf says why
        }
      };
    }
    let sbd: ParsedSbd;
    try {
      sbd = parseSbd(sbdBytes, readPayload);
    } catch (err) {
      if (err instanceof SbdhError) throw refuse(err.code === 'SBDH_PAYLOAD_MISMATCH' ? 'VALUE_INCONSISTENT' : 'OTHER', `${err.code}: ${err.message}`);
      throw err;
    }
    const f = sbd.facts;
    if (!sameParticipant(f.receiver, user.finalRecipient!)) throw refuse('VALUE_INCONSISTENT', `finalRecipient ${user.finalRecipient!.value} differs from the SBDH receiver ${f.receiver.value}`);
    if (!sameParticipant(f.sender, user.originalSender!)) throw refuse('VALUE_INCONSISTENT', `originalSender ${user.originalSender!.value} differs from the SBDH sender ${f.sender.value}`);
    if (actionDocumentTypeId(user.action) !== f.documentTypeId) throw refuse('VALUE_INCONSISTENT', `the eb:Action ${user.action ?? '(none)'} differs from the SBDH document type ${f.documentTypeId}`);
    if (user.service !== f.processId) throw refuse('VALUE_INCONSISTENT', `the eb:Service ${user.service ?? '(none)'} differs from the SBDH process ${f.processId}`);
    let document: DocumentCheck | undefined;
    const checkedEarly = early as { bytes: Uint8Array; result: DocumentCheck } | null;
    if (maxXmlBytes !== undefined && (sbd.payloadIds.rootName === 'Invoice' || sbd.payloadIds.rootName === 'CreditNote')) {
      if (checkedEarly && checkedEarly.bytes === sbd.payload) document = checkedEarly.result;
      else {
        try {
          document = { kind: 'checked', document: await checkReceivedDocument(sbd.payload, maxXmlBytes) };
        } catch (err) {
          if (!(err instanceof ImportRefused)) throw err;
          document = { kind: 'refused', code: err.code, message: err.message };
        }
      }
    }
    return { kind: 'signed', ...signed, after: { kind: 'ok', sbd, document } };
  } catch (err) {
    if (err instanceof Refusal) return { kind: 'signed', ...signed, after: { kind: 'refused', error: err.error } };
    throw err;
  }
}

/** A Buffer again for bytes that crossed a thread boundary (structured clone gives a plain Uint8Array). */
const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

export async function receiveAs4(deps: ReceiveDeps, contentType: string | undefined, body: Buffer): Promise<As4Answer> {
  const offload = deps.offload ?? null;
  const sign = {
    receipt: (r: Parameters<As4Offload['receipt']>[0]) => (offload ? offload.receipt(r) : Promise.resolve(receiptEnvelope(deps.identity, r))),
    error: (r: Parameters<As4Offload['error']>[0]) => (offload ? offload.error(r) : Promise.resolve(errorEnvelope(deps.identity, r))),
  };
  let messageId: string | null = null;
  const refuse = (kind: EbmsErrorKind, description: string) => new Refusal(ebmsError(kind, description, messageId));
  try {
    let checked: As4Check;
    try {
      checked = offload ? await offload.check(contentType, body) : await checkAs4Request({ privateKeyPem: deps.identity.privateKeyPem, maxPayloadBytes: deps.maxPayloadBytes, maxXmlBytes: deps.maxXmlBytes }, contentType, body);
    } catch (err) {
      if (err instanceof As4Busy) return { status: 503, contentType: 'text/plain; charset=utf-8', body: `busy: ${err.message}; retry later`, outcome: 'busy', messageId: null };
      throw err;
    }
    if (checked.kind === 'refused') {
      messageId = checked.messageId;
      throw new Refusal(checked.error);
    }
    const { user } = checked;
    messageId = user.messageId;
    const verdict = await deps.trust.verifyCertificateOnline(checked.certificatePem, deps.now(), 'ap');
    if (!verdict.ok) throw refuse('FAILED_DECRYPTION', `the sender's certificate is not trusted: ${verdict.reason}`);
    if (user.fromParty !== verdict.commonName) throw refuse('VALUE_INCONSISTENT', `the sending party ${user.fromParty ?? '(none)'} is not the signing certificate's CN ${verdict.commonName}`);
    if (checked.after.kind === 'refused') throw new Refusal(checked.after.error);
    const sbd = { ...checked.after.sbd, payload: asBuffer(checked.after.sbd.payload) };
    const pre = checked.after.document;
    const document: DocumentCheck | undefined = pre?.kind === 'checked' ? { kind: 'checked', document: { ...pre.document, bytes: sbd.payload } } : pre;
    const accepted = await deps.accept({ messageId: user.messageId, conversationId: user.conversationId, sendingAccessPoint: verdict.commonName, sbd, document });
    if (accepted.kind === 'refused') throw refuse(accepted.error, accepted.description);
    // Durably stored: only now the receipt.
    const receipt = await sign.receipt({
      refToMessageId: user.messageId,
      timestamp: deps.now().toISOString(),
      references: checked.references.map((r) => ({ uri: r.uri, xml: r.xml, digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256', digestValue: r.digest })),
    });
    return { status: 200, contentType: SOAP, body: receipt, outcome: accepted.kind, messageId: user.messageId };
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    return {
      status: 200,
      contentType: SOAP,
      body: await sign.error({ refToMessageId: messageId, errors: [err.error], timestamp: deps.now().toISOString() }),
      outcome: 'refused',
      messageId,
      error: err.error,
    };
  }
}
