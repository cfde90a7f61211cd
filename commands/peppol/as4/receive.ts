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
import type { Document, Element } from '@xmldom/xmldom';
import { ebmsError, EbmsHeaderError, readUserMessage, actionDocumentTypeId, NS, type EbmsError, type EbmsErrorKind, type ReadUserMessage } from '../../../domain/peppol/ebms.js';
import { sameParticipant } from '../../../domain/peppol/identifiers.js';
import { parseSbd, SbdhError, type ParsedSbd } from '../../../domain/peppol/sbdh.js';
import { cidOf, errorEnvelope, gunzipBounded, header, PackagingError, readHttpMessage, receiptEnvelope } from './message.js';
import type { AccessPointIdentity, PeppolTrust } from './types.js';
import { decryptAttachments, verifySignature, WssError, idOf } from './wss.js';

export interface InboundMessage {
  messageId: string;
  conversationId: string | null;
  sendingAccessPoint: string;
  sbd: ParsedSbd;
}

export type Acceptance = { kind: 'stored' | 'duplicate'; documentIds: string[] } | { kind: 'refused'; error: EbmsErrorKind; description: string };

export interface ReceiveDeps {
  identity: AccessPointIdentity;
  trust: PeppolTrust;
  now: () => Date;
  /** Largest decompressed payload accepted. */
  maxPayloadBytes: number;
  /** Stores the document durably (or finds it stored before); refuses an unknown receiver. */
  accept(message: InboundMessage): Promise<Acceptance>;
}

export interface As4Answer {
  status: number;
  contentType: string;
  body: string;
  /** What happened, for logs and metrics. */
  outcome: 'stored' | 'duplicate' | 'refused';
  messageId: string | null;
  error?: EbmsError;
}

class Refusal extends Error {
  constructor(readonly error: EbmsError) {
    super(error.description);
  }
}

const SOAP = 'application/soap+xml;charset=UTF-8';

export async function receiveAs4(deps: ReceiveDeps, contentType: string | undefined, body: Buffer): Promise<As4Answer> {
  let messageId: string | null = null;
  const refuse = (kind: EbmsErrorKind, description: string) => new Refusal(ebmsError(kind, description, messageId));
  try {
    let read;
    try {
      read = readHttpMessage(contentType, body, { maxPartBytes: deps.maxPayloadBytes + 64 * 1024 });
    } catch (err) {
      if (err instanceof PackagingError) throw refuse(err.kind, err.message);
      throw err;
    }
    const { doc, attachments } = read;
    const messaging = header(doc, NS.eb, 'Messaging');
    if (!messaging) throw refuse('INVALID_HEADER', 'the SOAP header has no eb:Messaging');
    let user: ReadUserMessage;
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
    let plain: Buffer;
    let verified;
    try {
      const decrypted = decryptAttachments(doc, security, deps.identity.privateKeyPem, (id) => attachments.get(id) ?? null);
      const part = decrypted.get(cid);
      if (!part) throw new WssError('POLICY_NONCOMPLIANCE', `the payload ${user.parts[0]!.href} is not encrypted`);
      verified = verifySignature(doc, signature, (id) => (id === cid ? part.bytes : null));
      if (!verified.signedIds.has(idOf(messaging) ?? '')) throw new WssError('POLICY_NONCOMPLIANCE', 'eb:Messaging is not signed');
      const bodyEl = doc.documentElement!.getElementsByTagNameNS(NS.soap, 'Body').item(0);
      if (!bodyEl || !verified.signedIds.has(idOf(bodyEl) ?? '')) throw new WssError('POLICY_NONCOMPLIANCE', 'the SOAP Body is not signed');
      if (!verified.references.some((r) => r.uri.startsWith('cid:'))) throw new WssError('POLICY_NONCOMPLIANCE', 'the payload attachment is not signed');
      plain = part.bytes;
    } catch (err) {
      // Every WS-Security failure is reported as EBMS:0102, as Peppol access points do; the description says which.
      if (err instanceof WssError) throw refuse('FAILED_DECRYPTION', err.message);
      throw err;
    }
    const verdict = await deps.trust.verifyCertificateOnline(verified.certificatePem, deps.now(), 'ap');
    if (!verdict.ok) throw refuse('FAILED_DECRYPTION', `the sender's certificate is not trusted: ${verdict.reason}`);
    if (user.fromParty !== verdict.commonName) throw refuse('VALUE_INCONSISTENT', `the sending party ${user.fromParty ?? '(none)'} is not the signing certificate's CN ${verdict.commonName}`);
    let sbdBytes: Buffer;
    try {
      sbdBytes = gunzipBounded(plain, deps.maxPayloadBytes);
    } catch (err) {
      throw refuse('DECOMPRESSION_FAILURE', `the payload does not decompress as gzip within ${deps.maxPayloadBytes} bytes: ${(err as Error).message}`);
    }
    let sbd: ParsedSbd;
    try {
      sbd = parseSbd(sbdBytes);
    } catch (err) {
      if (err instanceof SbdhError) throw refuse(err.code === 'SBDH_PAYLOAD_MISMATCH' ? 'VALUE_INCONSISTENT' : 'OTHER', `${err.code}: ${err.message}`);
      throw err;
    }
    const f = sbd.facts;
    if (!sameParticipant(f.receiver, user.finalRecipient!)) throw refuse('VALUE_INCONSISTENT', `finalRecipient ${user.finalRecipient!.value} differs from the SBDH receiver ${f.receiver.value}`);
    if (!sameParticipant(f.sender, user.originalSender!)) throw refuse('VALUE_INCONSISTENT', `originalSender ${user.originalSender!.value} differs from the SBDH sender ${f.sender.value}`);
    if (actionDocumentTypeId(user.action) !== f.documentTypeId) throw refuse('VALUE_INCONSISTENT', `the eb:Action ${user.action ?? '(none)'} differs from the SBDH document type ${f.documentTypeId}`);
    if (user.service !== f.processId) throw refuse('VALUE_INCONSISTENT', `the eb:Service ${user.service ?? '(none)'} differs from the SBDH process ${f.processId}`);
    const accepted = await deps.accept({ messageId: user.messageId, conversationId: user.conversationId, sendingAccessPoint: verdict.commonName, sbd });
    if (accepted.kind === 'refused') throw refuse(accepted.error, accepted.description);
    // Durably stored: only now the receipt.
    const receipt = receiptEnvelope(deps.identity, {
      refToMessageId: user.messageId,
      timestamp: deps.now().toISOString(),
      references: verified.references.map((r) => ({ uri: r.uri, xml: r.xml, digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256', digestValue: r.digest })),
    });
    return { status: 200, contentType: SOAP, body: receipt, outcome: accepted.kind, messageId: user.messageId };
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    return {
      status: 200,
      contentType: SOAP,
      body: errorEnvelope(deps.identity, { refToMessageId: messageId, errors: [err.error], timestamp: deps.now().toISOString() }),
      outcome: 'refused',
      messageId,
      error: err.error,
    };
  }
}
