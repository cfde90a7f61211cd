/**
 * Import of a UBL 2.1 Invoice or CreditNote file as a received purchase invoice of a workspace
 * (admin CLI `purchases receive`). Every check runs before anything is written, so a refused
 * file stores nothing: size, DOCTYPE/entities, UTF-8, well-formedness, the UBL root, the UBL 2.1
 * schemas, a document number, and a receiving company (the buyer endpoint id, or `--company`).
 */
import type { Knex } from 'knex';
import { readUbl, screenXml, checkUblRoot, participantIdText, UblRefusal } from '../../domain/purchases/ubl-reader.js';
import type { Clock } from '../../platform/clock.js';
import { workspaceCompaniesForEndpoint } from '../../readmodels/purchases.js';
import type { EventStore } from '../../platform/eventstore/port.js';
import type { CommandContext } from '../execute.js';
import { storeReceivedPurchase, type StoredPurchase } from './receive.js';
import { ublSchemaErrors } from './xsd.js';

export interface ImportDeps {
  store: EventStore;
  knex: Knex;
  clock: Clock;
  maxXmlBytes: number;
}

export interface ImportRequest {
  workspaceId: string;
  environment: 'sandbox' | 'production';
  bytes: Uint8Array;
  companyId: string | null;
}

/** Why an import is refused (one line; nothing was stored). */
export class ImportRefused extends Error {
  override readonly name = 'ImportRefused';
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

export async function importUblPurchase(deps: ImportDeps, request: ImportRequest, ctx: CommandContext): Promise<StoredPurchase & { invoiceNumber: string }> {
  const receivedAt = deps.clock.now();
  let parsed;
  try {
    const xml = screenXml(request.bytes, deps.maxXmlBytes);
    const root = checkUblRoot(xml);
    const errors = await ublSchemaErrors(xml, root);
    if (errors.length > 0) {
      const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
      throw new UblRefusal('XML_SCHEMA_INVALID', `the ${root} fails the UBL 2.1 schema: ${errors[0]}${more}`);
    }
    parsed = readUbl(xml);
  } catch (err) {
    if (err instanceof UblRefusal) throw new ImportRefused(err.code, err.message);
    throw err;
  }
  const companies = await workspaceCompaniesForEndpoint(deps.knex, request.workspaceId, request.environment, parsed.receiver, request.companyId);
  if (companies.length === 0) {
    const buyer = participantIdText(parsed.receiver);
    throw new ImportRefused(
      'RECEIVER_NOT_FOUND',
      request.companyId !== null
        ? `no active company ${request.companyId} onboarded in ${request.environment} in workspace ${request.workspaceId}`
        : buyer
          ? `no active company of workspace ${request.workspaceId} onboarded in ${request.environment} has the buyer endpoint ${buyer} as its Peppol participant id (name one with --company)`
          : `the document has no buyer endpoint id (cac:AccountingCustomerParty/cac:Party/cbc:EndpointID); name the receiving company with --company`,
    );
  }
  if (companies.length > 1) {
    throw new ImportRefused('RECEIVER_AMBIGUOUS', `several companies of workspace ${request.workspaceId} hold the buyer endpoint ${participantIdText(parsed.receiver)}; name one with --company`);
  }
  const company = companies[0]!;
  const stored = await storeReceivedPurchase(
    deps.store,
    {
      channel: 'ubl_import',
      environment: request.environment,
      bytes: request.bytes,
      parsed,
      company,
      fallbackCountry: company.countryCode,
      transmission: null,
      receivedAt,
      storedAt: deps.clock.now(),
    },
    ctx,
  );
  return { ...stored, invoiceNumber: parsed.documentNumber };
}
