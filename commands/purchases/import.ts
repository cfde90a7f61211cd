/**
 * The one way a received UBL 2.1 Invoice or CreditNote becomes a purchase, whatever carried it:
 * the admin CLI (`purchases receive`), the in-process sandbox Peppol network and an AS4
 * endpoint all call `receivePurchaseDocument`. Every check runs before anything is written, so
 * a refused document stores nothing: size, UTF-8, well-formedness and the prolog (a DOCTYPE is
 * refused as the XML parser meets it), the UBL root, the UBL 2.1 schemas, a document number,
 * and a receiving company. The identity and the duplicate decision are taken from the log
 * (./receive.ts).
 */
import type { Knex } from 'knex';
import { participantIdText, type ReadUbl, type UblRoot } from '../../domain/purchases/ubl-reader.js';
import type { TransmissionIdentity } from '../../domain/purchases/identity.js';
import type { PurchaseChannel } from '../../domain/purchases/purchase.js';
import type { Clock } from '../../platform/clock.js';
import { companiesHoldingParticipants, workspaceCompaniesForEndpoint, type ReceivingCompany } from '../../readmodels/purchases.js';
import type { EventStore } from '../../platform/eventstore/port.js';
import type { CommandContext } from '../execute.js';
import { storeReceivedPurchase, type StoredPurchase } from './receive.js';
import { checkReceivedDocument, ImportRefused, type CheckedDocument } from './check.js';

export interface ImportDeps {
  store: EventStore;
  knex: Knex;
  clock: Clock;
  maxXmlBytes: number;
}

export { checkReceivedDocument, ImportRefused, type CheckedDocument } from './check.js';

/** Who receives a document. */
export type Recipient =
  /** A file import into a workspace: the company named, else the workspace's company whose participant id is the buyer endpoint. */
  | { workspaceId: string; companyId: string | null }
  /** A network: every active company, in any workspace, holding the participant id (null: the document's buyer endpoint). */
  | { participantId: string | null }
  /** Companies a network already routed the message to. */
  | { companies: readonly ReceivingCompany[] };

export interface ReceivedMessage {
  /** The exact bytes received (the UBL document; over AS4, the SBDH's payload). */
  bytes: Uint8Array;
  environment: 'sandbox' | 'production';
  channel: PurchaseChannel;
  to: Recipient;
  /**
   * What the transmission says of itself, kept with the purchase; its `as4MessageId` and
   * `sbdhInstanceId` (optional) are identity keys too: a message carrying either again is the
   * same purchase even if the bytes differ. Null for a file import.
   */
  transmission?: (TransmissionIdentity & Record<string, unknown>) | null;
  /** The country when the document names none (a network's); default: the receiving company's. */
  fallbackCountry?: string | null;
  /** The document, when a caller already ran `checkReceivedDocument` on these bytes (a network that answers before it stores). */
  checked?: CheckedDocument;
}

export interface ReceivedOutcome {
  root: UblRoot;
  documentNumber: string;
  /** One per receiving company, in their order: stored now, or `duplicate: true` with the stored purchase's id. */
  purchases: StoredPurchase[];
}

/**
 * Receives a document: checks it, finds its receiving companies, and stores it once for each
 * (a duplicate is answered with the stored purchase). Throws ImportRefused, with nothing stored.
 *
 * The receiving company is looked up in the companies read model, not decided from the log.
 * Safe: that choice never decides whether a document is a duplicate (the identity keys' append
 * does, from the log), and no command changes a company's participant id or country after
 * onboarding. A read model that is behind can only refuse a document for a company onboarded a
 * moment ago (RECEIVER_NOT_FOUND, nothing stored; a retry stores it), or store one for a company
 * whose source was archived a moment ago, as it would have a moment earlier.
 */
export async function receivePurchaseDocument(deps: ImportDeps, message: ReceivedMessage, ctx: CommandContext): Promise<ReceivedOutcome> {
  const receivedAt = deps.clock.now();
  const checked = message.checked && message.checked.bytes === message.bytes ? message.checked : await checkReceivedDocument(message.bytes, deps.maxXmlBytes);
  const { parsed } = checked;
  const companies = await receivingCompanies(deps, message, parsed);
  const purchases: StoredPurchase[] = [];
  for (const company of companies) {
    purchases.push(
      await storeReceivedPurchase(
        deps.store,
        {
          channel: message.channel,
          environment: message.environment,
          bytes: message.bytes,
          parsed,
          company,
          fallbackCountry: message.fallbackCountry ?? company.countryCode,
          transmission: message.transmission ?? null,
          identity: message.transmission ?? null,
          receivedAt,
          storedAt: deps.clock.now(),
        },
        ctx,
      ),
    );
  }
  return { root: checked.root, documentNumber: parsed.documentNumber, purchases };
}

async function receivingCompanies(deps: ImportDeps, message: ReceivedMessage, parsed: ReadUbl): Promise<readonly ReceivingCompany[]> {
  const to = message.to;
  if ('companies' in to) return to.companies;
  if ('participantId' in to) {
    const participant = to.participantId ?? participantIdText(parsed.receiver);
    const found = participant ? ((await companiesHoldingParticipants(deps.knex, [{ participantId: participant, environment: message.environment }]))[0] ?? []) : [];
    if (found.length === 0) throw new ImportRefused('RECEIVER_NOT_FOUND', `no active company onboarded in ${message.environment} holds the participant id ${participant ?? '(none)'}`);
    return found;
  }
  const companies = await workspaceCompaniesForEndpoint(deps.knex, to.workspaceId, message.environment, parsed.receiver, to.companyId);
  if (companies.length === 0) {
    const buyer = participantIdText(parsed.receiver);
    throw new ImportRefused(
      'RECEIVER_NOT_FOUND',
      to.companyId !== null
        ? `no active company ${to.companyId} onboarded in ${message.environment} in workspace ${to.workspaceId}`
        : buyer
          ? `no active company of workspace ${to.workspaceId} onboarded in ${message.environment} has the buyer endpoint ${buyer} as its Peppol participant id (name one with --company)`
          : `the document has no buyer endpoint id (cac:AccountingCustomerParty/cac:Party/cbc:EndpointID); name the receiving company with --company`,
    );
  }
  if (companies.length > 1) {
    throw new ImportRefused('RECEIVER_AMBIGUOUS', `several companies of workspace ${to.workspaceId} hold the buyer endpoint ${participantIdText(parsed.receiver)}; name one with --company`);
  }
  return companies;
}

export interface ImportRequest {
  workspaceId: string;
  environment: 'sandbox' | 'production';
  bytes: Uint8Array;
  companyId: string | null;
}

/** A file import into a workspace (admin CLI): `receivePurchaseDocument` for one company. */
export async function importUblPurchase(deps: ImportDeps, request: ImportRequest, ctx: CommandContext): Promise<StoredPurchase & { invoiceNumber: string }> {
  const out = await receivePurchaseDocument(
    deps,
    { bytes: request.bytes, environment: request.environment, channel: 'ubl_import', to: { workspaceId: request.workspaceId, companyId: request.companyId } },
    ctx,
  );
  return { ...out.purchases[0]!, invoiceNumber: out.documentNumber };
}
