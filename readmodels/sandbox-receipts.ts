/** Storage of the sandbox destinations: what each simulated authority or access point received. */
import type { Knex } from 'knex';
import { prepared } from './prepared.js';

export interface SandboxReceipt {
  uuid: string;
  destination: string;
  answer: Record<string, unknown>;
  receivedAt: Date;
}

/** Records the first answer for a UUID; returns the stored receipt (the earlier one when it existed). */
export async function recordSandboxReceipt(
  knex: Knex,
  receipt: { uuid: string; destination: string; environment: string; answer: Record<string, unknown>; receivedAt: Date },
): Promise<{ receipt: SandboxReceipt; firstTime: boolean }> {
  // Once per sandbox delivery: prepared (readmodels/prepared.ts).
  const inserted = await prepared(
    knex('sandbox_receipts')
      .insert({ uuid: receipt.uuid, destination: receipt.destination, environment: receipt.environment, answer: JSON.stringify(receipt.answer), received_at: receipt.receivedAt })
      .onConflict('uuid')
      .ignore()
      .returning(['uuid', 'destination', 'answer', 'received_at']),
  );
  // Received before: the earlier receipt stands (read only then).
  const row = inserted[0] ?? (await knex('sandbox_receipts').where({ uuid: receipt.uuid }).first());
  return { receipt: { uuid: row.uuid, destination: row.destination, answer: row.answer, receivedAt: row.received_at }, firstTime: inserted.length > 0 };
}

export async function countSandboxReceipts(knex: Knex, uuid: string): Promise<number> {
  const [row] = await knex('sandbox_receipts').where({ uuid }).count({ n: '*' });
  return Number(row?.n ?? 0);
}
