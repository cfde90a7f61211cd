/**
 * Sandbox connectors: simulators of ZATCA, MyInvois and a Peppol access point that behave like
 * their real counterparts — results, rejections with reasons, duplicate detection by document
 * UUID, delivery records — with every outcome selectable by the scenarios of
 * domain/delivery/policy.ts. They serve the sandbox environment only; production needs real
 * connectors, and a production document whose destination has none is never faked.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { FinalResult } from '../../domain/document/document.js';
import { verifyStamp } from '../../domain/zatca/stamp.js';
import { sandboxScenario, type Destination, type SandboxScenario } from '../../domain/delivery/policy.js';
import type { Clock } from '../../platform/clock.js';
import { turnBatcher } from '../../platform/batching.js';
import { recordSandboxReceipts, type NewSandboxReceipt, type SandboxReceipt } from '../../readmodels/sandbox-receipts.js';
import type { PeppolNetwork } from '../purchases/sandbox-network.js';
import { participantIdText, UBL_NAMESPACES, type ParticipantId, type UblRoot } from '../../domain/purchases/ubl-reader.js';
import { documentTypeIdOf } from '../../domain/peppol/identifiers.js';
import type { CheckedDocument } from '../purchases/import.js';
import type { ReceivingCompany } from '../../readmodels/purchases.js';
import type { Connector, ConnectorRegistry, DeliveryAnswer, DeliveryRequest } from './connector.js';

export interface SandboxOptions {
  /** Simulated time each delivery takes (0 in tests). */
  latencyMs: number;
  /** Peppol: how long after delivery the final result is known (0: at once). */
  finalResultAfterMs: number;
}

interface Party {
  name?: unknown;
  peppolId?: unknown;
  taxIds?: { value?: unknown }[];
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const party = (doc: unknown, role: 'seller' | 'buyer'): Party => ((doc as { parties?: Record<string, Party> })?.parties?.[role] ?? {}) as Party;

function scenarioOf(destination: Destination, request: DeliveryRequest): SandboxScenario {
  return sandboxScenario({ destination, documentNumber: request.documentNumber, buyerPeppolId: str(party(request.coreDocument, 'buyer').peppolId) });
}


/** Scenarios that fail before the destination registers anything. */
function transportFailure(destination: Destination, scenario: SandboxScenario, attempt: number): DeliveryAnswer | null {
  if (scenario === 'timeout') {
    return {
      kind: 'failed',
      outcomeUnknown: true,
      error: { code: 'DELIVERY_TIMEOUT', message: `${destination} did not answer in time; the document may or may not have been received`, path: [], source: 'delivery' },
    };
  }
  if (scenario === 'unavailable' || (scenario === 'transient_then_accept' && attempt === 1)) {
    return {
      kind: 'failed',
      outcomeUnknown: false,
      error: { code: 'DESTINATION_UNAVAILABLE', message: `${destination} answered 503 Service Unavailable`, path: [], source: 'delivery' },
    };
  }
  return null;
}

/** Records a destination's first answer for a UUID; the stored receipt (the earlier one when it existed). */
type RecordReceipt = (receipt: NewSandboxReceipt) => Promise<{ receipt: SandboxReceipt; firstTime: boolean }>;

abstract class SandboxConnector implements Connector {
  abstract readonly name: string;
  abstract readonly destination: Destination;
  constructor(
    protected readonly recordReceipt: RecordReceipt,
    protected readonly clock: Clock,
    protected readonly options: SandboxOptions,
  ) {}

  /** What the destination answers the first time it receives the document. */
  protected abstract firstAnswer(request: DeliveryRequest, scenario: SandboxScenario, now: Date): DeliveryAnswer;

  async deliver(request: DeliveryRequest): Promise<DeliveryAnswer> {
    // No timer without a latency: a timer of 0 ms still waits for the event loop's next round
    // (measured under load: 59 ms at the median), which pushed a reactor batch's answers past the
    // start grace, so that their starts were appended on their own.
    if (this.options.latencyMs > 0) await sleep(this.options.latencyMs);
    const scenario = scenarioOf(this.destination, request);
    const failure = transportFailure(this.destination, scenario, request.attempt);
    if (failure) return failure;
    const now = this.clock.now();
    const answer = this.firstAnswer(request, scenario, now);
    const { receipt, firstTime } = await this.recordReceipt({
      uuid: request.uuid,
      destination: this.destination,
      environment: request.environment,
      answer: answer as unknown as Record<string, unknown>,
      receivedAt: now,
    });
    const stored = receipt.answer as unknown as DeliveryAnswer;
    if (firstTime && scenario !== 'reported_earlier') return stored;
    return this.answerAgain(stored);
  }

  /** The document was received before (a retry after a lost answer): the earlier result, marked so. */
  protected answerAgain(stored: DeliveryAnswer): DeliveryAnswer {
    return stored.kind === 'delivered' ? { ...stored, alreadyReceived: true } : stored;
  }

  async finalResult(request: DeliveryRequest, government: Record<string, unknown>): Promise<FinalResult | null> {
    void request;
    void government;
    return null;
  }
}

const STAMP_MARK = Buffer.from('<ext:UBLExtensions');
const hasStamp = (xml: Buffer) => xml.includes(STAMP_MARK);

class ZatcaSandbox extends SandboxConnector {
  readonly name = 'zatca-sandbox';
  readonly destination = 'ZATCA' as const;

  protected firstAnswer(request: DeliveryRequest, scenario: SandboxScenario, now: Date): DeliveryAnswer {
    const simplified = request.documentType.variant === 'simplified';
    const base = {
      authority: 'ZATCA',
      environment: request.environment,
      uuid: request.uuid,
      invoiceHash: request.invoiceHash ?? null,
      submittedAt: now.toISOString(),
    };
    // A stamped invoice is checked as the authority checks it: hash, signature, certificate digest, QR.
    const problems = request.xml && hasStamp(request.xml) ? verifyStamp(request.xml.toString('utf8')) : [];
    if (problems.length > 0) {
      const errorMessages = problems.map((p) => ({ type: 'ERROR', code: p.code, category: 'SIGNATURE_ERRORS', message: `${p.path}: ${p.message}`, status: 'ERROR' }));
      return {
        kind: 'refused',
        government: { ...base, result: 'REJECTED', status: 'INVALID', validationResults: { status: 'ERROR', infoMessages: [], warningMessages: [], errorMessages } },
        errors: problems.map((p) => ({ code: p.code, message: p.message, path: [p.path], source: 'government' as const })),
      };
    }
    if (scenario === 'reject') {
      const errorMessages = [{ type: 'ERROR', code: 'BR-KSA-37', category: 'KSA', message: 'The seller VAT registration number is not valid for this invoice', status: 'ERROR' }];
      return {
        kind: 'refused',
        government: { ...base, result: 'REJECTED', status: 'INVALID', validationResults: { status: 'ERROR', infoMessages: [], warningMessages: [], errorMessages } },
        errors: errorMessages.map((m) => ({ code: m.code, message: m.message, path: [], source: 'government' as const })),
      };
    }
    const result = simplified ? 'REPORTED' : 'CLEARED';
    const government = {
      ...base,
      result,
      [simplified ? 'reportingStatus' : 'clearanceStatus']: result,
      validationResults: { status: 'PASS', infoMessages: [{ type: 'INFO', code: 'XSD_ZATCA_VALID', message: 'Complied with UBL 2.1 standards' }], warningMessages: [], errorMessages: [] },
      status: 'VALID',
    };
    return { kind: 'delivered', government, final: { outcome: 'valid', government, errors: [] }, finalResultDueAt: null, alreadyReceived: false };
  }

  protected override answerAgain(stored: DeliveryAnswer): DeliveryAnswer {
    if (stored.kind !== 'delivered') return stored;
    // ZATCA's answer to a document it has: a success that says so.
    const government = { ...stored.government, result: 'REPORTED_SUCCESSFULLY_EARLIER', previousResult: stored.government.result };
    return { ...stored, government, final: stored.final ? { ...stored.final, government } : null, alreadyReceived: true };
  }
}

class MyInvoisSandbox extends SandboxConnector {
  readonly name = 'myinvois-sandbox';
  readonly destination = 'MYINVOIS' as const;

  protected firstAnswer(request: DeliveryRequest, scenario: SandboxScenario, now: Date): DeliveryAnswer {
    const longId = createHash('sha256').update(request.uuid).digest('hex').slice(0, 40).toUpperCase();
    const base = {
      authority: 'MyInvois',
      environment: request.environment,
      submissionUid: createHash('sha256').update(`submission:${request.uuid}`).digest('hex').slice(0, 26).toUpperCase(),
      uuid: request.uuid,
      longId,
      dateTimeReceived: now.toISOString(),
      dateTimeValidated: now.toISOString(),
    };
    if (scenario === 'reject') {
      const error = { code: 'CF321', message: 'Supplier TIN does not match the registered taxpayer', target: 'AccountingSupplierParty' };
      return {
        kind: 'refused',
        government: { ...base, result: 'Invalid', status: 'INVALID', validationResults: { status: 'Invalid', validationSteps: [{ status: 'Invalid', name: 'Taxpayer validator', error }] } },
        errors: [{ code: error.code, message: error.message, path: [], source: 'government' }],
      };
    }
    const government = { ...base, result: 'Valid', status: 'VALID', validationResults: { status: 'Valid', validationSteps: [] } };
    return { kind: 'delivered', government, final: { outcome: 'valid', government, errors: [] }, finalResultDueAt: null, alreadyReceived: false };
  }
}

/**
 * The sandbox Peppol access point. With a network (the sandbox Peppol network between onboarded
 * companies), it routes the transmitted XML by its parties, names the sending and receiving
 * participants from its endpoints in the delivery record, and hands the document to every
 * onboarded company holding the receiving participant id, whose access point reads the whole
 * document; a document addressed to a participant no onboarded company holds is delivered as
 * before (the record says `receiverRegistered: false`). A message that cannot be routed, or that
 * a receiving access point cannot read, is refused.
 */
/**
 * The document type (`busdox-docid-qns`) and process of a Peppol document, from its own
 * CustomizationID and ProfileID (a German XRechnung document is its own document type), as the
 * route read them from its header; null when the header lacks either of them or either party's
 * endpoint, as for peppolIdentifiersOf (the network then refuses what it cannot read).
 */
function peppolDocumentType(header: { root: UblRoot; sender: unknown; receiver: unknown; customizationId: string | null; profileId: string | null }): { documentTypeId: string; processId: string } | null {
  if (!header.customizationId || !header.profileId || !header.sender || !header.receiver) return null;
  return { documentTypeId: documentTypeIdOf(UBL_NAMESPACES[header.root], header.root, header.customizationId), processId: header.profileId };
}

class PeppolSandbox extends SandboxConnector {
  readonly name = 'peppol-sandbox-ap';
  readonly destination = 'PEPPOL' as const;
  /** What deliver() learnt about a request before the base class asks for its first answer. */
  private readonly pending = new WeakMap<
    DeliveryRequest,
    {
      sender: ParticipantId | null;
      receiver: ParticipantId | null;
      /** The Peppol document type and process of the XML (null: it has none), as a real access point sends them. */
      peppol: { documentTypeId: string; processId: string } | null;
      checked: CheckedDocument | null;
      refusal: string | null;
      receivers: ReceivingCompany[];
    }
  >();

  constructor(recordReceipt: RecordReceipt, clock: Clock, options: SandboxOptions, private readonly network: PeppolNetwork | null) {
    super(recordReceipt, clock, options);
  }

  override async deliver(request: DeliveryRequest): Promise<DeliveryAnswer> {
    const xml = this.network ? request.xml : null;
    if (this.network && xml) {
      const scenario = scenarioOf(this.destination, request);
      // One read of the header routes the message and names its document type and process; before the
      // first await, so the deliveries of a batch stay in one turn (platform/batching.ts).
      const route = this.network.route(xml);
      const peppol = route.ok ? peppolDocumentType(route) : null;
      const receivers = route.ok && scenario !== 'participant_not_found' ? await this.network.receiversOf(route.receiver, request.environment) : [];
      // Only a receiving access point on the network reads the whole document.
      const read = receivers.length > 0 ? await this.network.read(xml) : null;
      this.pending.set(request, {
        sender: route.ok ? route.sender : null,
        receiver: route.ok ? route.receiver : null,
        peppol,
        checked: read?.ok ? read.checked : null,
        refusal: !route.ok ? route.reason : read && !read.ok ? read.reason : null,
        receivers,
      });
    }
    const answer = await super.deliver(request);
    const pending = this.pending.get(request);
    this.pending.delete(request);
    if (this.network && xml && pending?.checked && pending.receivers.length > 0 && answer.kind === 'delivered') {
      await this.network.transmit(
        {
          documentId: request.documentId,
          messageId: String(answer.government.messageId),
          country: request.country,
          environment: request.environment,
          xml,
          checked: pending.checked,
          ...(pending.peppol ?? {}),
        },
        pending.receivers,
      );
    }
    return answer;
  }

  protected firstAnswer(request: DeliveryRequest, scenario: SandboxScenario, now: Date): DeliveryAnswer {
    const seller = party(request.coreDocument, 'seller');
    const buyer = party(request.coreDocument, 'buyer');
    const scheme = request.country === 'AE' ? '0235' : request.country === 'BE' ? '0208' : '9930';
    const pending = this.pending.get(request);
    const record: Record<string, unknown> = {
      network: 'PEPPOL',
      accessPoint: 'sandbox-ap',
      environment: request.environment,
      messageId: createHash('sha256').update(`msg:${request.uuid}`).digest('hex').slice(0, 32),
      senderParticipantId: participantIdText(pending?.sender ?? null) ?? `${scheme}:${str(seller.peppolId) ?? 'unknown'}`,
      receiverParticipantId: participantIdText(pending?.receiver ?? null) ?? `${scheme}:${str(buyer.peppolId) ?? 'unknown'}`,
      sentAt: now.toISOString(),
    };
    if (pending?.peppol) Object.assign(record, pending.peppol);
    if (pending) {
      record.receiverRegistered = pending.receivers.length > 0;
      if (pending.receivers.length > 0) record.receivingAccessPoint = 'sandbox-ap';
    }
    if (scenario === 'participant_not_found' || scenario === 'reject' || pending?.refusal) {
      const error =
        scenario === 'participant_not_found'
          ? { code: 'PEPPOL_PARTICIPANT_NOT_FOUND', message: `receiver ${String(record.receiverParticipantId)} is not registered in the Peppol directory (SML lookup failed)` }
          : pending?.refusal && scenario !== 'reject'
            ? { code: 'PEPPOL_MESSAGE_REJECTED', message: `the receiving access point could not read the message: ${pending.refusal}` }
            : { code: 'PEPPOL_MESSAGE_REJECTED', message: 'the receiving access point rejected the message: business rule validation failed' };
      return {
        kind: 'refused',
        government: { ...record, status: 'INVALID', deliveredAt: null, failure: error },
        errors: [{ ...error, path: [], source: scenario === 'participant_not_found' ? ('delivery' as const) : ('government' as const) }],
      };
    }
    const delivered = { ...record, deliveredAt: now.toISOString(), status: 'DELIVERED' };
    const final = this.options.finalResultAfterMs > 0 ? null : this.finalOf(scenario, delivered, now);
    const finalResultDueAt = final ? null : new Date(now.getTime() + this.options.finalResultAfterMs).toISOString();
    return { kind: 'delivered', government: delivered, final, finalResultDueAt, alreadyReceived: false };
  }

  private finalOf(scenario: SandboxScenario, delivered: Record<string, unknown>, now: Date): FinalResult {
    if (scenario !== 'buyer_rejects' && this.options.finalResultAfterMs > 0 && delivered.receiverRegistered === true) {
      // A buyer on the network answers for itself (docs/api/invoice-response.md): none came within the window.
      const government = { ...delivered, status: 'VALID', finalResultAt: now.toISOString(), buyerResponse: null, buyerResponseWindowClosed: true };
      return { outcome: 'valid', government, errors: [] };
    }
    if (scenario === 'buyer_rejects') {
      const government = { ...delivered, status: 'INVALID', finalResultAt: now.toISOString(), buyerResponse: { code: 'RE', reason: 'The buyer rejected the invoice: no matching purchase order' } };
      return { outcome: 'invalid', government, errors: [{ code: 'BUYER_REJECTED', message: 'The buyer rejected the invoice: no matching purchase order', path: [], source: 'government' }] };
    }
    const government = { ...delivered, status: 'VALID', finalResultAt: now.toISOString(), buyerResponse: { code: 'AP', reason: null } };
    return { outcome: 'valid', government, errors: [] };
  }

  override async finalResult(request: DeliveryRequest, government: Record<string, unknown>): Promise<FinalResult | null> {
    const due = Date.parse(String(government.deliveredAt)) + this.options.finalResultAfterMs;
    const now = this.clock.now();
    if (now.getTime() < due) return null;
    return this.finalOf(scenarioOf(this.destination, request), government, now);
  }
}

export function sandboxConnectors(knex: Knex, clock: Clock, options: SandboxOptions, network: PeppolNetwork | null = null): ConnectorRegistry {
  // The deliveries of a reactor's batch are received at once: one statement records their receipts (platform/batching.ts).
  const recordReceipt: RecordReceipt = turnBatcher((receipts: readonly NewSandboxReceipt[]) => recordSandboxReceipts(knex, receipts));
  const connectors: Record<Destination, Connector> = {
    ZATCA: new ZatcaSandbox(recordReceipt, clock, options),
    MYINVOIS: new MyInvoisSandbox(recordReceipt, clock, options),
    PEPPOL: new PeppolSandbox(recordReceipt, clock, options, network),
  };
  const destinations: Destination[] = ['ZATCA', 'MYINVOIS', 'PEPPOL'];
  return {
    connectorFor: (environment, destination) => (environment === 'production' ? null : connectors[destination]),
    missing: () => destinations.map((destination) => ({ environment: 'production', destination })),
    present: () => destinations.map((destination) => ({ environment: 'sandbox', destination, connector: connectors[destination].name })),
  };
}
