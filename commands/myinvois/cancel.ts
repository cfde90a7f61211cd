/**
 * Cancelling a valid Malaysian document at MyInvois (Cancel Document, API v1.0): its issuer may
 * cancel it within 72 hours of its validation, with a reason. Refused here, precisely and without
 * asking the authority, when the document is not a production MY document that ended final_valid
 * at MyInvois, or when the window has closed; MyInvois's own refusal (its OperationPeriodOver or
 * IncorrectState answer) is reported as it comes.
 *
 * Once MyInvois confirms the cancellation it is recorded on the document's stream
 * (`DocumentCancelled`, appended with the expected revision): the document moves from
 * final_valid to final_invalid with one error item `DOCUMENT_CANCELLED`, and its status, the
 * search index and the `document.status.changed` webhook follow. A document whose cancellation
 * is recorded already is refused (`DOCUMENT_ALREADY_CANCELLED`) without asking MyInvois again.
 */
import type { Knex } from 'knex';
import { cancellableAtAuthority, documentDecider, documentStream } from '../../domain/document/document.js';
import { MYINVOIS_LIMITS, supplierTin } from '../../domain/myinvois/api.js';
import type { EventStore } from '../../platform/eventstore/port.js';
import { findSalesDocument } from '../../readmodels/sales-documents.js';
import { execute, loadAggregate } from '../execute.js';
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
  /** The document's state in the service once the cancellation is recorded. */
  state: 'final_invalid';
}

export async function cancelMyInvoisDocument(deps: MyInvoisConnectorDeps & { knex: Knex; store: EventStore }, input: { workspaceId: string; documentId: string; reason: string }): Promise<Cancelled> {
  const reason = input.reason.trim();
  if (reason === '' || reason.length > 300) throw new CancellationRefused('MYINVOIS_CANCEL_REASON_INVALID', 'a cancellation needs a reason of 1 to 300 characters');
  const doc = await findSalesDocument(deps.knex, input.workspaceId, input.documentId);
  if (!doc) throw new CancellationRefused('DOCUMENT_NOT_FOUND', `no document ${input.documentId} in workspace ${input.workspaceId}`);
  const stream = documentStream(input.documentId);
  const loaded = await loadAggregate(deps.store, documentDecider, stream);
  if (loaded.state.cancelled) throw new CancellationRefused('DOCUMENT_ALREADY_CANCELLED', `document ${input.documentId} was cancelled already; it is final_invalid`);
  if (!cancellableAtAuthority(doc.country, doc.environment)) throw new CancellationRefused('MYINVOIS_NOT_APPLICABLE', `document ${input.documentId} is a ${doc.environment} ${doc.country} document; only production MY documents are at MyInvois`);
  const government = (doc.government ?? {}) as Record<string, unknown>;
  if (loaded.state.state !== 'final_valid' || government.authority !== 'MyInvois' || typeof government.uuid !== 'string') {
    throw new CancellationRefused('MYINVOIS_NOT_VALID', `document ${input.documentId} is ${loaded.state.state}; only a document MyInvois validated can be cancelled`);
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
  let answer: { uuid: string; status: string };
  try {
    answer = await deps.client.cancel({ clientId: login.clientId, clientSecret: login.clientSecret, onBehalfOf: login.onBehalfOf }, government.uuid, reason);
  } catch (err) {
    if (err instanceof MyInvoisError && err.kind === 'refused') {
      const code = err.apiError?.code === 'OperationPeriodOver' ? 'MYINVOIS_CANCELLATION_WINDOW_CLOSED' : 'MYINVOIS_CANCEL_REFUSED';
      throw new CancellationRefused(code, err.message);
    }
    throw err;
  }
  const at = deps.clock.now();
  const cancelledAt = at.toISOString();
  // Confirmed by MyInvois: recorded on the document (no change if a concurrent run recorded it first).
  await execute(
    deps.store,
    documentDecider,
    stream,
    {
      type: 'RecordCancellation',
      reason,
      cancelledAt,
      authority: 'MyInvois',
      authorityUuid: answer.uuid,
      government: { ...government, cancellation: { status: answer.status, reason, cancelledAt, by: 'seller' } },
    },
    { now: at, workspaceId: input.workspaceId, environment: doc.environment, actor: 'admin-cli' },
  );
  return { documentId: input.documentId, uuid: answer.uuid, status: answer.status, reason, cancelledAt, state: 'final_invalid' };
}
