/**
 * The CSV of a ledger export (RFC 4180, written by csv-stringify): one header line, then one
 * line per transaction, oldest first; lines end with CRLF. Values are written as they are (no
 * spreadsheet formula guard), so the file is a faithful copy of the ledger.
 */
import { stringify } from 'csv-stringify/sync';
import type { LedgerRow } from '../../readmodels/credits.js';
import { BALANCE_KEYS } from './present.js';


export const CSV_COLUMNS = [
  'transactionId',
  'eventType',
  'occurredAt',
  'companyId',
  'environment',
  'amount',
  'allowancePeriodId',
  'version',
  'target',
  'reservationId',
  'documentId',
  'lotId',
  'reason',
  'correlationId',
  'idempotencyKey',
  'requestId',
  'bulkJobId',
  ...BALANCE_KEYS.map((f) => `balanceBefore.${f}`),
  ...BALANCE_KEYS.map((f) => `balanceAfter.${f}`),
] as const;

export function csvLine(values: readonly unknown[]): string {
  return stringify([values.map((v) => (v === null || v === undefined ? '' : v))], { record_delimiter: 'windows', quoted_match: /[\r\n]/, cast: { number: (n) => String(n) } });
}

export function csvRow(row: LedgerRow): string {
  return csvLine([
    row.transactionId,
    row.eventType,
    row.occurredAt,
    row.companyId,
    row.environment,
    row.amount,
    row.allowancePeriodId,
    row.version,
    row.target,
    row.reservationId,
    row.documentId,
    row.lotId,
    row.reason,
    row.correlationId,
    row.idempotencyKey,
    row.requestId,
    row.bulkJobId,
    ...BALANCE_KEYS.map((f) => row.balanceBefore?.[f]),
    ...BALANCE_KEYS.map((f) => row.balanceAfter?.[f]),
  ]);
}
