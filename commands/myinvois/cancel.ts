/**
 * Cancelling a valid Malaysian document at MyInvois (Cancel Document, API v1.0): its issuer may
 * cancel it within 72 hours of its validation, with a reason. Refused here, precisely and without
 * asking the authority, when the document is not a production MY document that ended final_valid
 * at MyInvois, or when the window has closed; MyInvois's own refusal (its OperationPeriodOver or
 * IncorrectState answer) is reported as it comes.
 *
 * The cancellation is made at the authority; the document's state in the service stays as it
 * was (the state machine has no transition out of final_valid), and the authority's answer is
 * what this returns.
 */
import type { Knex } from 'knex';
import { MYINVOIS_LIMITS, supplierTin } from '../../domain/myinvois/api.js';
import { findSalesDocument } from '../../readmodels/sales-documents.js';
import { MyInvoisError } from './client.js';
import type { MyInvoisConnectorDeps } from './connector.js';

export class CancellationRefused extends Error {
  override readonly name = 'CancellationRefused';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Cancelled {
  documentId: string;
  uuid: string;
  status: string;
  reason: string;
  cancelledAt: string;
}

export async function cancelMyInvoisDocument(deps: MyInvoisConnectorDeps & { knex: Knex }, input: { workspaceId: string; documentId: string; reason: string }): Promise<Cancelled> {
  const reason = input.reason.trim();
  if (reason === '' || reason.length > 300) throw new CancellationRefused('MYINVOIS_CANCEL_REASON_INVALID', 'a cancellation needs a reason of 1 to 300 characters');
  const doc = await findSalesDocument(deps.knex, input.workspaceId, input.documentId);
  if (!doc) throw new CancellationRefused('DOCUMENT_NOT_FOUND', `no document ${input.documentId} in workspace ${input.workspaceId}`);
  if (doc.country !== 'MY' || doc.environment !== 'production') throw new CancellationRefused('MYINVOIS_NOT_APPLICABLE', `document ${input.documentId} is a ${doc.environment} ${doc.country} document; only production MY documents are at MyInvois`);
  const government = (doc.government ?? {}) as Record<string, unknown>;
  if (doc.state !== 'final_valid' || government.authority !== 'MyInvois' || typeof government.uuid !== 'string') {
    throw new CancellationRefused('MYINVOIS_NOT_VALID', `document ${input.documentId} is ${doc.state}; only a document MyInvois validated can be cancelled`);
  }
  const validatedAt = typeof government.dateTimeValidated === 'string' ? Date.parse(government.dateTimeValidated) : NaN;
  const now = deps.clock.now();
  if (Number.isNaN(validatedAt)) throw new CancellationRefused('MYINVOIS_NOT_VALID', `document ${input.documentId} has no validation time from MyInvois`);
  const closesAt = new Date(validatedAt + MYINVOIS_LIMITS.cancellationWindowMs);
  if (now.getTime() > closesAt.getTime()) {
    throw new CancellationRefused(
      'MYINVOIS_CANCELLATION_WINDOW_CLOSED',
      `document ${input.documentId} was validated at ${new Date(validatedAt).toISOString()}; MyInvois allows cancelling it until ${closesAt.toISOString()} (72 hours). Issue a credit note instead.`,
    );
  }
  const tin = typeof government.issuerTin === 'string' ? government.issuerTin : supplierTin(null);
  const taxpayer = tin ? await deps.credentials.get(doc.environment, tin) : null;
  if (!taxpayer) throw new CancellationRefused('MYINVOIS_TAXPAYER_NOT_ONBOARDED', `no MyInvois credentials for TIN ${String(tin)} in ${doc.environment}`);
  const login =
    taxpayer.mode === 'taxpayer'
      ? { clientId: taxpayer.client!.clientId, clientSecret: taxpayer.client!.clientSecret, onBehalfOf: null }
      : deps.config.intermediary
        ? { ...deps.config.intermediary, onBehalfOf: taxpayer.tin }
        : null;
  if (!login) throw new CancellationRefused('MYINVOIS_INTERMEDIARY_NOT_CONFIGURED', 'MYINVOIS_CLIENT_ID and MYINVOIS_CLIENT_SECRET are not set');
  try {
    const answer = await deps.client.cancel({ clientId: login.clientId, clientSecret: login.clientSecret, onBehalfOf: login.onBehalfOf }, government.uuid, reason);
    return { documentId: input.documentId, uuid: answer.uuid, status: answer.status, reason, cancelledAt: deps.clock.now().toISOString() };
  } catch (err) {
    if (err instanceof MyInvoisError && err.kind === 'refused') {
      const code = err.apiError?.code === 'OperationPeriodOver' ? 'MYINVOIS_CANCELLATION_WINDOW_CLOSED' : 'MYINVOIS_CANCEL_REFUSED';
      throw new CancellationRefused(code, err.message);
    }
    throw err;
  }
}
