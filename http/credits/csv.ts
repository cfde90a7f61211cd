/**
 * The CSV of a ledger export (RFC 4180, written by csv-stringify): one header line, then one
 * line per transaction, oldest first; lines end with CRLF. A text cell starting with `=`, `+`,
 * `-`, `@`, a tab or a carriage return (or their full-width forms) is prefixed with `'`, as OWASP
 * recommends against formula injection when the file is opened in a spreadsheet (csv-stringify's
 * `escape_formulas`); numbers, negative amounts included, are written as they are.
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
  return stringify([values.map((v) => (v === null || v === undefined ? '' : v))], { record_delimiter: 'windows', escape_formulas: true, quoted_match: /[\r\n]/, cast: { number: (n) => String(n) } });
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
