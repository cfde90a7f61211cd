/**
 * The MyInvois delivery connector: production MY documents go to LHDNM's MyInvois system.
 *
 * For each document: the supplier's TIN from the document, that taxpayer's credentials
 * (commands/myinvois/credentials.ts: its own client, or the service's intermediary client on
 * behalf of the TIN), the document signed with the taxpayer's certificate
 * (domain/myinvois/signature.ts), then Submit Documents. Documents of the same taxpayer that
 * arrive together are submitted together: a submission is sent when `batchWindowMs` has passed
 * since its first document, or as soon as one more document would break a published limit (100
 * documents, 5 MB); a document over 300 KB is refused without being sent.
 *
 * Answers: an accepted document is delivered, its final result due after the published polling
 * interval; a rejected one is refused with the authority's errors. The final result is read with
 * Get Submission (at most once per submission every 3 s, however many of its documents ask):
 * Valid is final valid with the MyInvois UUID, long id and validation link; Invalid is final
 * invalid with the validation errors of Get Document Details, one error item per error.
 *
 * Idempotency: the signing time is the document's issue date and time, so every attempt sends the
 * same bytes (the same documentHash). After a time-out (outcome unknown) the next attempt first
 * asks Get Recent Documents whether the taxpayer's document with this code number was received,
 * and takes that one if so; and MyInvois itself refuses an identical submission within its
 * duplicate window (422 with Retry-After), which is answered the same way. A document is never
 * registered twice.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DocumentErrorItem, FinalResult } from '../../domain/document/document.js';
import { MYINVOIS_LIMITS, rejectionErrors, supplierTin, validationErrors, validationLink, type ApiError, type DocumentSummary, type SubmissionAnswer } from '../../domain/myinvois/api.js';
import { MyInvoisSignatureError, signMyInvoisDocument, type SignedDocument } from '../../domain/myinvois/signature.js';
import type { Clock } from '../../platform/clock.js';
import type { MyInvoisConfig } from '../../platform/config.js';
import type { Connector, DeliveryAnswer, DeliveryRequest } from '../delivery/connector.js';
import { MyInvoisError, type Login, type MyInvoisClient } from './client.js';
import { MyInvoisCredentialsError, type MyInvoisCredentials, type Taxpayer } from './credentials.js';

export interface MyInvoisConnectorDeps {
  config: MyInvoisConfig;
  client: MyInvoisClient;
  credentials: MyInvoisCredentials;
  clock: Clock;
}

const deliveryError = (code: string, message: string): DocumentErrorItem => ({ code, message, path: [], source: 'delivery' });

/** How far back a reconciliation looks for an earlier submission of a document. */
const RECONCILE_WINDOW_MS = 3 * 24 * 3600 * 1000;
/** JSON around one document of a submission (`{"format":"XML","documentHash":…,"codeNumber":…,"document":…}`). */
const PER_DOCUMENT_OVERHEAD = 256;

type SubmitOutcome =
  | { kind: 'accepted'; uuid: string; submissionUid: string }
  | { kind: 'rejected'; errors: DocumentErrorItem[]; duplicate: boolean }
  | { kind: 'duplicate'; retryAfterMs: number | null }
  | { kind: 'refused'; errors: DocumentErrorItem[] }
  | { kind: 'failed'; error: MyInvoisError };

interface Pending {
  codeNumber: string;
  signed: SignedDocument;
  size: number;
  resolve: (o: SubmitOutcome) => void;
}

interface Batch {
  login: Login;
  items: Pending[];
  bytes: number;
  timer: NodeJS.Timeout | null;
}

/**
 * A rejection that says the document is one MyInvois already holds (the same document submitted
 * again): by its code, or by its message. Either way the connector then looks the document up
 * (Get Recent Documents) rather than trusting the rejection, so a misread code costs one look-up.
 */
const DUPLICATE_CODES = new Set(['DS302', 'DuplicateDocument', 'Duplicate']);
const isDuplicate = (e: ApiError) => [e, ...(e.details ?? [])].some((d) => (d.code && DUPLICATE_CODES.has(d.code)) || /duplicate/i.test(d.message ?? ''));

export class MyInvoisConnector implements Connector {
  readonly name = 'myinvois-api';
  readonly destination = 'MYINVOIS' as const;
  private readonly batches = new Map<string, Batch>();
  private readonly polls = new Map<string, { at: number; answer: Promise<SubmissionAnswer> }>();
  /** Submissions sent and the documents they held (tests and metrics read them). */
  readonly stats = { submissions: 0, documents: 0 };

  constructor(readonly deps: MyInvoisConnectorDeps) {}

  private loginOf(taxpayer: Taxpayer): Login | null {
    if (taxpayer.mode === 'taxpayer') return { clientId: taxpayer.client!.clientId, clientSecret: taxpayer.client!.clientSecret, onBehalfOf: null };
    const own = this.deps.config.intermediary;
    return own ? { clientId: own.clientId, clientSecret: own.clientSecret, onBehalfOf: taxpayer.tin } : null;
  }

  private async taxpayerOf(request: DeliveryRequest): Promise<{ taxpayer: Taxpayer; login: Login } | DeliveryAnswer> {
    const tin = supplierTin(request.coreDocument);
    if (!tin) return { kind: 'refused', government: null, errors: [deliveryError('MYINVOIS_SUPPLIER_TIN_MISSING', 'the document names no supplier TIN (parties.seller.taxIds with type TIN)')] };
    let taxpayer: Taxpayer | null;
    try {
      taxpayer = await this.deps.credentials.get(request.environment, tin);
    } catch (err) {
      if (err instanceof MyInvoisCredentialsError) return { kind: 'failed', outcomeUnknown: false, error: deliveryError('MYINVOIS_CREDENTIALS_UNREADABLE', err.message) };
      throw err;
    }
    // Not onboarded yet: retried on the schedule, so onboarding the taxpayer meanwhile lets it through.
    if (!taxpayer) return { kind: 'failed', outcomeUnknown: false, error: deliveryError('MYINVOIS_TAXPAYER_NOT_ONBOARDED', `no MyInvois credentials for TIN ${tin} in ${request.environment}: onboard it with \`admin myinvois taxpayer set\``) };
    const login = this.loginOf(taxpayer);
    if (!login) return { kind: 'failed', outcomeUnknown: false, error: deliveryError('MYINVOIS_INTERMEDIARY_NOT_CONFIGURED', `TIN ${tin} is onboarded for intermediary login, but MYINVOIS_CLIENT_ID and MYINVOIS_CLIENT_SECRET are not set`) };
    return { taxpayer, login };
  }

  async deliver(request: DeliveryRequest): Promise<DeliveryAnswer> {
    if (!request.xml) return { kind: 'refused', government: null, errors: [deliveryError('MYINVOIS_DOCUMENT_MISSING', 'the document has no XML to submit')] };
    const who = await this.taxpayerOf(request);
    if ('kind' in who) return who;
    const { taxpayer, login } = who;
    const xml = request.xml.toString('utf8');
    const issued = /<cbc:IssueDate>(\d{4}-\d{2}-\d{2})<\/cbc:IssueDate><cbc:IssueTime>(\d{2}:\d{2}:\d{2})Z?<\/cbc:IssueTime>/.exec(xml);
    if (!issued) return { kind: 'refused', government: null, errors: [deliveryError('MYINVOIS_ISSUE_TIME_MISSING', 'the document has no cbc:IssueDate and cbc:IssueTime')] };
    let signed: SignedDocument;
    try {
      signed = signMyInvoisDocument({ xml, privateKeyPem: taxpayer.signingKeyPem, certificatePem: taxpayer.certificatePem, signingTime: `${issued[1]}T${issued[2]}Z` });
    } catch (err) {
      if (err instanceof MyInvoisSignatureError) return { kind: 'refused', government: null, errors: [deliveryError('MYINVOIS_SIGNATURE_FAILED', err.message)] };
      throw err;
    }
    if (signed.bytes.length > MYINVOIS_LIMITS.bytesPerDocument) {
      return {
        kind: 'refused',
        government: null,
        errors: [deliveryError('MYINVOIS_DOCUMENT_TOO_LARGE', `the signed document is ${signed.bytes.length} bytes; MyInvois takes at most ${MYINVOIS_LIMITS.bytesPerDocument} bytes a document`)],
      };
    }
    const codeNumber = request.documentNumber ?? request.documentId;
    const base = {
      authority: 'MyInvois',
      system: this.deps.config.system,
      environment: request.environment,
      issuerTin: taxpayer.tin,
      login: taxpayer.mode,
      internalId: codeNumber,
      documentHash: signed.documentHash,
    };
    try {
      // An earlier attempt may have been received though its answer was lost: ask before sending again.
      if (request.attempt > 1) {
        const earlier = await this.reconcile(login, taxpayer.tin, codeNumber);
        if (earlier) return this.answerFor(earlier, base, signed, true);
      }
      const outcome = await this.enqueue(login, taxpayer.tin, codeNumber, signed);
      if (outcome.kind === 'duplicate' || (outcome.kind === 'rejected' && outcome.duplicate)) {
        // MyInvois holds this document already (an earlier attempt got through): take that one.
        if (outcome.kind === 'duplicate' && outcome.retryAfterMs) await sleep(Math.min(outcome.retryAfterMs, 5000));
        const earlier = await this.reconcile(login, taxpayer.tin, codeNumber);
        if (earlier) return this.answerFor(earlier, base, signed, true);
        if (outcome.kind === 'rejected') return { kind: 'refused', government: { ...base, status: 'INVALID', result: 'Rejected' }, errors: outcome.errors };
        return { kind: 'failed', outcomeUnknown: true, error: deliveryError('MYINVOIS_DUPLICATE_SUBMISSION', 'MyInvois answered that it received this submission already, but the document is not listed yet; asked again on the next attempt') };
      }
      switch (outcome.kind) {
        case 'accepted': {
          const now = this.deps.clock.now();
          const government = { ...base, submissionUid: outcome.submissionUid, uuid: outcome.uuid, status: 'SUBMITTED', result: 'Submitted', submittedAt: now.toISOString() };
          return {
            kind: 'delivered',
            government,
            final: null,
            finalResultDueAt: new Date(now.getTime() + MYINVOIS_LIMITS.pollIntervalMs).toISOString(),
            alreadyReceived: false,
            xml: signed.bytes,
          };
        }
        case 'rejected':
        case 'refused':
          return { kind: 'refused', government: { ...base, status: 'INVALID', result: 'Rejected', errors: outcome.errors }, errors: outcome.errors };
        case 'failed':
          throw outcome.error;
      }
    } catch (err) {
      if (err instanceof MyInvoisError) return { kind: 'failed', outcomeUnknown: err.outcomeUnknown, error: this.failureItem(err) };
      throw err;
    }
  }

  private failureItem(err: MyInvoisError): DocumentErrorItem {
    const code =
      err.kind === 'timeout'
        ? 'DELIVERY_TIMEOUT'
        : err.kind === 'throttled'
          ? 'MYINVOIS_THROTTLED'
          : err.kind === 'unauthorized'
            ? 'MYINVOIS_LOGIN_REFUSED'
            : err.kind === 'forbidden'
              ? 'MYINVOIS_FORBIDDEN'
              : err.kind === 'unreachable' || err.kind === 'unavailable'
                ? 'DESTINATION_UNAVAILABLE'
                : 'MYINVOIS_PROTOCOL_ERROR';
    return deliveryError(code, err.message);
  }

  /** A document MyInvois already holds, as this attempt's answer. */
  private async answerFor(summary: DocumentSummary, base: Record<string, unknown>, signed: SignedDocument, alreadyReceived: boolean): Promise<DeliveryAnswer> {
    const government = { ...base, submissionUid: summary.submissionUid, uuid: summary.uuid, status: 'SUBMITTED', result: 'Submitted', dateTimeReceived: summary.dateTimeReceived ?? null };
    const final = summary.status === 'Submitted' ? null : await this.finalOf(government, summary);
    if (final && final.outcome === 'invalid') return { kind: 'refused', government: final.government as Record<string, unknown>, errors: final.errors };
    return {
      kind: 'delivered',
      government: (final?.government as Record<string, unknown>) ?? government,
      final,
      finalResultDueAt: final ? null : new Date(this.deps.clock.now().getTime() + MYINVOIS_LIMITS.pollIntervalMs).toISOString(),
      alreadyReceived,
      xml: signed.bytes,
    };
  }

  /** The taxpayer's document with this code number MyInvois received lately, if any. */
  private async reconcile(login: Login, tin: string, codeNumber: string): Promise<DocumentSummary | null> {
    const now = this.deps.clock.now();
    const recent = await this.deps.client.recentDocuments(login, { issuerTin: tin, from: new Date(now.getTime() - RECONCILE_WINDOW_MS), to: now });
    const mine = recent.filter((d) => d.internalId === codeNumber && (d.issuerTin == null || d.issuerTin === tin));
    // The newest first (the API lists by submission, newest first): a valid or pending one wins over an invalid one.
    return mine.find((d) => d.status !== 'Invalid') ?? mine[0] ?? null;
  }

  /** Adds a signed document to its taxpayer's next submission; the outcome when that submission is answered. */
  private enqueue(login: Login, tin: string, codeNumber: string, signed: SignedDocument): Promise<SubmitOutcome> {
    const key = `${login.clientId}\n${login.onBehalfOf ?? ''}\n${tin}`;
    const size = Math.ceil(signed.bytes.length / 3) * 4 + codeNumber.length + PER_DOCUMENT_OVERHEAD;
    return new Promise<SubmitOutcome>((resolve) => {
      let batch = this.batches.get(key);
      const full = (b: Batch) =>
        b.items.length + 1 > MYINVOIS_LIMITS.documentsPerSubmission || b.bytes + size > MYINVOIS_LIMITS.bytesPerSubmission || b.items.some((i) => i.codeNumber === codeNumber);
      if (batch && full(batch)) {
        this.flush(key, batch);
        batch = undefined;
      }
      if (!batch) {
        batch = { login, items: [], bytes: 16, timer: null };
        this.batches.set(key, batch);
        const b = batch;
        b.timer = setTimeout(() => this.flush(key, b), this.deps.config.batchWindowMs);
      }
      batch.items.push({ codeNumber, signed, size, resolve });
      batch.bytes += size;
    });
  }

  /** Documents waiting for their submission to be sent. */
  pending(): number {
    let n = 0;
    for (const b of this.batches.values()) n += b.items.length;
    return n;
  }

  /** Sends every waiting submission now (at shutdown, or when the caller knows no more documents come). */
  flushAll(): void {
    for (const [key, batch] of [...this.batches]) this.flush(key, batch);
  }

  private flush(key: string, batch: Batch): void {
    if (this.batches.get(key) === batch) this.batches.delete(key);
    if (batch.timer) clearTimeout(batch.timer);
    batch.timer = null;
    void this.submitBatch(batch);
  }

  private async submitBatch(batch: Batch): Promise<void> {
    const { items } = batch;
    this.stats.submissions++;
    this.stats.documents += items.length;
    try {
      const r = await this.deps.client.submit(
        batch.login,
        items.map((i) => ({ format: 'XML' as const, documentHash: i.signed.documentHash, codeNumber: i.codeNumber, document: i.signed.bytes.toString('base64') })),
      );
      if (r.kind === 'duplicate') {
        for (const i of items) i.resolve({ kind: 'duplicate', retryAfterMs: r.retryAfterMs });
        return;
      }
      if (r.kind === 'refused') {
        // A refused submission of several documents says nothing of each one: each goes again alone,
        // and only a document refused on its own is refused for good.
        if (items.length > 1) {
          await Promise.all(items.map((i) => this.submitBatch({ login: batch.login, items: [i], bytes: i.size, timer: null })));
          return;
        }
        const errors = rejectionErrors(r.error ?? { code: 'BadStructure', message: 'MyInvois refused the submission (400)' });
        for (const i of items) i.resolve({ kind: 'refused', errors });
        return;
      }
      const accepted = new Map(r.answer.acceptedDocuments.map((d) => [d.invoiceCodeNumber, d.uuid]));
      const rejected = new Map(r.answer.rejectedDocuments.map((d) => [d.invoiceCodeNumber, d.error]));
      for (const i of items) {
        const uuid = accepted.get(i.codeNumber);
        const error = rejected.get(i.codeNumber);
        if (uuid && r.answer.submissionUid) i.resolve({ kind: 'accepted', uuid, submissionUid: r.answer.submissionUid });
        else if (error) {
          i.resolve({ kind: 'rejected', errors: rejectionErrors(error), duplicate: isDuplicate(error) });
        } else i.resolve({ kind: 'failed', error: new MyInvoisError('protocol', `the submission's answer does not list document ${i.codeNumber}`, true) });
      }
    } catch (err) {
      const error = err instanceof MyInvoisError ? err : new MyInvoisError('unreachable', (err as Error).message, true);
      for (const i of items) i.resolve({ kind: 'failed', error });
    }
  }

  /** Get Submission, at most once per submission every polling interval (however many documents ask). */
  private submission(login: Login, submissionUid: string): Promise<SubmissionAnswer> {
    const cached = this.polls.get(submissionUid);
    const now = Date.now();
    if (cached && now - cached.at < MYINVOIS_LIMITS.pollIntervalMs) return cached.answer;
    const answer = this.deps.client.getSubmission(login, submissionUid);
    this.polls.set(submissionUid, { at: now, answer });
    answer.catch(() => this.polls.delete(submissionUid));
    if (this.polls.size > 10_000) for (const [k, v] of this.polls) if (now - v.at > MYINVOIS_LIMITS.pollIntervalMs) this.polls.delete(k);
    return answer;
  }

  /** The final result of a document whose summary is no longer Submitted. */
  private async finalOf(government: Record<string, unknown>, summary: DocumentSummary, login?: Login): Promise<FinalResult | null> {
    const common = { ...government, uuid: summary.uuid, submissionUid: summary.submissionUid, dateTimeReceived: summary.dateTimeReceived ?? null, dateTimeValidated: summary.dateTimeValidated ?? null };
    switch (summary.status) {
      case 'Valid': {
        const longId = summary.longId ?? null;
        const link = longId ? validationLink(this.deps.config.portalBaseUrl, summary.uuid, longId) : null;
        const g = { ...common, status: 'VALID', result: 'Valid', longId, validationLink: link };
        return { outcome: 'valid', government: g, errors: [] };
      }
      case 'Invalid': {
        const who = login ?? (await this.loginFor(government));
        const details = who ? await this.deps.client.getDocumentDetails(who, summary.uuid) : null;
        const errors = details ? validationErrors(details) : [{ code: 'MYINVOIS_INVALID', message: summary.documentStatusReason || 'MyInvois found the document invalid', path: [], source: 'government' as const }];
        const g = { ...common, status: 'INVALID', result: 'Invalid', validationResults: details?.validationResults ?? null };
        return { outcome: 'invalid', government: g, errors };
      }
      case 'Cancelled': {
        const g = { ...common, status: 'INVALID', result: 'Cancelled', cancelDateTime: summary.cancelDateTime ?? null };
        return { outcome: 'invalid', government: g, errors: [{ code: 'MYINVOIS_CANCELLED', message: `the document was cancelled at MyInvois${summary.documentStatusReason ? `: ${summary.documentStatusReason}` : ''}`, path: [], source: 'government' }] };
      }
      default:
        return null;
    }
  }

  private async loginFor(government: Record<string, unknown>): Promise<Login | null> {
    const tin = typeof government.issuerTin === 'string' ? government.issuerTin : null;
    const environment = typeof government.environment === 'string' ? government.environment : null;
    if (!tin || !environment) return null;
    const taxpayer = await this.deps.credentials.get(environment, tin);
    return taxpayer ? this.loginOf(taxpayer) : null;
  }

  async finalResult(request: DeliveryRequest, government: Record<string, unknown>): Promise<FinalResult | null> {
    const submissionUid = typeof government.submissionUid === 'string' ? government.submissionUid : null;
    const uuid = typeof government.uuid === 'string' ? government.uuid : null;
    if (!submissionUid || !uuid) return null;
    const login = await this.loginFor({ ...government, environment: government.environment ?? request.environment });
    if (!login) return null;
    try {
      const submission = await this.submission(login, submissionUid);
      const summary = submission.documentSummary.find((d) => d.uuid === uuid);
      if (!summary) return null;
      return await this.finalOf(government, summary, login);
    } catch (err) {
      // Asked again on the worker's next round.
      if (err instanceof MyInvoisError) return null;
      throw err;
    }
  }
}
