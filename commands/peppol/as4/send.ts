/**
 * The sending side of the access point (corner 2): one AS4 exchange with a receiving access
 * point. Builds the signed, encrypted user message, posts it, and reads the synchronous answer:
 * a receipt counts only when it is signed by the receiver's certificate (the one its SMP
 * published, chaining to a trusted Peppol CA), its eb:Messaging is the signed one, it refers to
 * this message, and it repeats the digests of every part this message signed (non-repudiation of
 * receipt). ebMS errors are classified permanent or transient (domain/peppol/ebms.ts); transport
 * failures and 5xx are transient.
 */
import type { Document, Element } from '@xmldom/xmldom';
import { getGlobalDispatcher, util, type Dispatcher } from 'undici';
import { isDuplicateRefusal, isTransientEbmsError, isTransientHttpStatus, NS, readSignal, type EbmsError, type UserMessageHeader } from '../../../domain/peppol/ebms.js';
import { buildUserMessage, header, PackagingError, readHttpMessage } from './message.js';
import { certificateOf } from '../../../platform/peppol-pki.js';
import type { AccessPointIdentity, PeppolTrust } from './types.js';
import { idOf, pemBody, verifySignature, WssError, type VerifiedSignature } from './wss.js';

export interface OutboundMessage {
  endpointUrl: string;
  receiverCertificatePem: string;
  /** Stable for the document: a retry carries the same id, so the receiver de-duplicates. */
  messageId: string;
  conversationId: string;
  header: Pick<UserMessageHeader, 'processId' | 'documentTypeId' | 'originalSender' | 'finalRecipient'>;
  /** The SBDH document. */
  payload: Buffer;
}

export type SendOutcome =
  | { kind: 'receipt'; messageId: string; receiptMessageId: string | null; receiverCommonName: string; duplicate: boolean }
  | { kind: 'refused'; messageId: string; errors: EbmsError[] }
  | { kind: 'retry'; messageId: string; code: 'DESTINATION_UNAVAILABLE' | 'DELIVERY_TIMEOUT' | 'PEPPOL_TRANSIENT_ERROR' | 'PEPPOL_BAD_RESPONSE'; message: string; outcomeUnknown: boolean };

export interface SendDeps {
  identity: AccessPointIdentity;
  trust: PeppolTrust;
  now: () => Date;
  timeoutMs: number;
  /** Largest response accepted. */
  maxResponseBytes?: number;
}

/** Connection errors after the request may have gone out (undici's "other side closed", a reset). */
const CLOSED_AFTER_SENDING = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/** Why an HTTP exchange ended without a whole answer. */
class ExchangeFailure extends Error {
  override readonly name = 'ExchangeFailure';
  constructor(
    override readonly cause: unknown,
    /** The deadline passed. */
    readonly timedOut: boolean,
    /** The status line and headers had come (the answer was cut off). */
    readonly answered: boolean,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/**
 * One POST over undici's dispatcher (the shared keep-alive connections), the answer collected in
 * memory, through Dispatcher.dispatch with the handler callbacks every undici version calls (the
 * global dispatcher may be Node's bundled undici), not `request`: no response stream, async
 * resource or abort-signal listeners per message, about half of `request`'s CPU per exchange.
 * One deadline covers the request and the whole answer: a timer cleared when the exchange ends
 * (AbortSignal.timeout's timer and signal would live for the whole timeout, weakly referenced,
 * piling up in the heap at hundreds of messages a second).
 */
function post(url: string, contentType: string, body: Buffer, timeoutMs: number): Promise<{ status: number; contentType: string | undefined; bytes: Buffer }> {
  let target: URL;
  try {
    target = new URL(url);
  } catch (err) {
    return Promise.reject(new ExchangeFailure(err, false, false));
  }
  return new Promise((resolve, reject) => {
    let cancel: ((err?: Error) => void) | null = null;
    let settled = false;
    let answered = false;
    let status = 0;
    let type: string | undefined;
    const chunks: Buffer[] = [];
    const fail = (err: unknown, timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new ExchangeFailure(err, timedOut, answered));
    };
    const timer = setTimeout(() => {
      const err = new Error(`no answer within ${timeoutMs} ms`);
      fail(err, true);
      cancel?.(err);
    }, timeoutMs);
    getGlobalDispatcher().dispatch(
      { origin: target.origin, path: target.pathname + target.search, method: 'POST', headers: { 'content-type': contentType, 'mime-version': '1.0' }, body },
      {
        onConnect(abort: (err?: Error) => void) {
          cancel = abort;
          if (settled) abort(new Error(`no answer within ${timeoutMs} ms`));
        },
        onHeaders(statusCode: number, rawHeaders: Buffer[]) {
          status = statusCode;
          answered = statusCode >= 200;
          const contentType = util.parseHeaders(rawHeaders)['content-type'];
          type = Array.isArray(contentType) ? contentType[0] : contentType;
          return true;
        },
        onData(chunk: Buffer) {
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ status, contentType: type, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
        },
        onError(err: Error) {
          fail(err, false);
        },
      } as unknown as Dispatcher.DispatchHandler,
    );
  });
}

export function commonNameOf(certificatePem: string): string {
  const subject = certificateOf(certificatePem).subject;
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(subject)?.[1];
  if (!cn) throw new Error('the certificate has no CN');
  return cn.trim();
}

export async function sendAs4(deps: SendDeps, m: OutboundMessage): Promise<SendOutcome> {
  const built = buildUserMessage(
    {
      ...m.header,
      messageId: m.messageId,
      conversationId: m.conversationId,
      timestamp: deps.now().toISOString(),
      fromParty: deps.identity.commonName,
      toParty: commonNameOf(m.receiverCertificatePem),
    },
    m.payload,
    deps.identity,
    m.receiverCertificatePem,
  );
  const retry = (code: Extract<SendOutcome, { kind: 'retry' }>['code'], message: string, outcomeUnknown: boolean): SendOutcome => ({ kind: 'retry', messageId: m.messageId, code, message, outcomeUnknown });
  let status: number;
  let responseType: string | undefined;
  let bytes: Buffer;
  try {
    ({ status, contentType: responseType, bytes } = await post(m.endpointUrl, built.contentType, built.body, deps.timeoutMs));
  } catch (err) {
    if (!(err instanceof ExchangeFailure)) throw err;
    if (err.answered) return retry('DELIVERY_TIMEOUT', `the answer of ${m.endpointUrl} was cut off: ${err.message}`, true);
    if (err.timedOut) {
      return retry('DELIVERY_TIMEOUT', `the receiving access point ${m.endpointUrl} did not answer within ${deps.timeoutMs} ms; it may have received the message`, true);
    }
    const e = err.cause as Error & { code?: string };
    const cause = e.cause instanceof Error ? (e.cause as Error & { code?: string }) : null;
    const code = e.code ?? cause?.code ?? '';
    const reason = cause ? cause.message : e.message;
    // Closed or reset once connected (the receiver stopped after storing, before its receipt): it may have the message.
    if (CLOSED_AFTER_SENDING.has(code)) {
      return retry('DESTINATION_UNAVAILABLE', `the connection to the receiving access point ${m.endpointUrl} closed before its answer (${reason}); it may have received the message`, true);
    }
    return retry('DESTINATION_UNAVAILABLE', `the receiving access point ${m.endpointUrl} cannot be reached: ${reason}`, false);
  }
  if (isTransientHttpStatus(status)) return retry('DESTINATION_UNAVAILABLE', `the receiving access point answered HTTP ${status}`, status !== 503 && status !== 429);
  if (deps.maxResponseBytes && bytes.length > deps.maxResponseBytes) return retry('PEPPOL_BAD_RESPONSE', `the answer has ${bytes.length} bytes, more than ${deps.maxResponseBytes}`, true);
  let doc: Document;
  try {
    // The answer's DOM built from saxes' events (the same tree as DOMParser's, at half its CPU).
    doc = readHttpMessage(responseType, bytes, { maxPartBytes: deps.maxResponseBytes ?? 10 * 1024 * 1024 }).doc;
  } catch (err) {
    if (!(err instanceof PackagingError)) throw err;
    const message = `HTTP ${status} without an AS4 signal: ${err.message}`;
    // A 4xx without a signal: the receiver refuses the request itself (permanent).
    return status >= 400
      ? { kind: 'refused', messageId: m.messageId, errors: [{ code: `HTTP_${status}`, severity: 'failure', shortDescription: 'HttpError', category: 'Communication', description: message, refToMessageInError: m.messageId }] }
      : retry('PEPPOL_BAD_RESPONSE', message, true);
  }
  const messaging = header(doc, NS.eb, 'Messaging');
  const signal = messaging ? readSignal(messaging) : null;
  if (!signal) return retry('PEPPOL_BAD_RESPONSE', `HTTP ${status}: the answer carries neither a receipt nor an error`, true);
  if (signal.kind === 'error') {
    const failures = signal.errors.filter((e) => e.severity === 'failure');
    if (failures.length > 0 && failures.every((e) => isDuplicateRefusal(e))) {
      // The receiver had this message id already: an earlier attempt arrived.
      return { kind: 'receipt', messageId: m.messageId, receiptMessageId: signal.messageId, receiverCommonName: commonNameOf(m.receiverCertificatePem), duplicate: true };
    }
    if (failures.length === 0 || failures.every(isTransientEbmsError)) {
      const first = signal.errors[0]!;
      return retry('PEPPOL_TRANSIENT_ERROR', `${first.code} ${first.shortDescription}: ${first.description}`, false);
    }
    return { kind: 'refused', messageId: m.messageId, errors: failures.filter((e) => !isTransientEbmsError(e)) };
  }
  // A receipt: signed by the receiver, for this message, repeating what was signed.
  const security = header(doc, NS.wsse, 'Security');
  const signature = security?.getElementsByTagNameNS(NS.ds, 'Signature').item(0);
  if (!signature) return retry('PEPPOL_BAD_RESPONSE', 'the receipt is not signed', true);
  let verified: VerifiedSignature;
  try {
    verified = verifySignature(doc, signature, () => null);
  } catch (err) {
    if (err instanceof WssError) return retry('PEPPOL_BAD_RESPONSE', `the receipt's signature does not verify: ${err.message}`, true);
    throw err;
  }
  // The eb:Messaging read above must be the one signed (not an unsigned one put before it).
  if (!verified.signedIds.has(idOf(messaging!) ?? '')) return retry('PEPPOL_BAD_RESPONSE', "the receipt's eb:Messaging is not covered by its signature", true);
  const signer = verified.certificatePem;
  if (pemBody(signer) !== pemBody(m.receiverCertificatePem)) return retry('PEPPOL_BAD_RESPONSE', "the receipt is signed by another certificate than the receiver's published one", true);
  const verdict = await deps.trust.verifyCertificateOnline(signer, deps.now(), 'ap');
  if (!verdict.ok) return retry('PEPPOL_BAD_RESPONSE', `the receipt's signing certificate is not trusted: ${verdict.reason}`, true);
  if (signal.refToMessageId !== m.messageId) return retry('PEPPOL_BAD_RESPONSE', `the receipt refers to ${signal.refToMessageId ?? '(nothing)'}, not to ${m.messageId}`, true);
  const missing = built.references.filter((sent) => !signal.references.some((r) => r.uri === sent.uri && r.digestValue === sent.digest));
  if (missing.length > 0) return retry('PEPPOL_BAD_RESPONSE', `the receipt's non-repudiation information lacks the digest of ${missing.map((r) => r.uri).join(', ')}`, true);
  return { kind: 'receipt', messageId: m.messageId, receiptMessageId: signal.messageId, receiverCommonName: verdict.commonName, duplicate: false };
}
