/** Storage of the sandbox destinations: what each simulated authority or access point received. */
import type { Knex } from 'knex';
import { prepared } from './prepared.js';

export interface SandboxReceipt {
  uuid: string;
  destination: string;
  answer: Record<string, unknown>;
  receivedAt: Date;
}

export interface NewSandboxReceipt {
  uuid: string;
  destination: string;
  environment: string;
  answer: Record<string, unknown>;
  receivedAt: Date;
}

const toReceipt = (row: { uuid: string; destination: string; answer: Record<string, unknown>; received_at: Date }): SandboxReceipt => ({
  uuid: row.uuid,
  destination: row.destination,
  answer: row.answer,
  receivedAt: row.received_at,
});

/**
 * Records the first answer for each UUID, several in one statement, and returns each one's stored
 * receipt: the earlier one when it existed (read by one more statement, only then). A UUID given
 * twice is recorded once: its first entry is the first time, the later ones get that receipt as
 * received before.
 */
export async function recordSandboxReceipts(knex: Knex, receipts: readonly NewSandboxReceipt[]): Promise<{ receipt: SandboxReceipt; firstTime: boolean }[]> {
  if (receipts.length === 0) return [];
  const firstOf = new Map<string, NewSandboxReceipt>();
  for (const r of receipts) if (!firstOf.has(r.uuid)) firstOf.set(r.uuid, r);
  const rows = [...firstOf.values()].map((r) => ({ uuid: r.uuid, destination: r.destination, environment: r.environment, answer: r.answer, received_at: r.receivedAt.toISOString() }));
  // Once per delivery batch: prepared (readmodels/prepared.ts); the batch goes as one jsonb parameter.
  const inserted = await prepared(
    knex.raw(
      `insert into sandbox_receipts (uuid, destination, environment, answer, received_at)
       select uuid, destination, environment, answer, received_at
         from jsonb_to_recordset(?::jsonb) as r(uuid text, destination text, environment text, answer jsonb, received_at timestamptz)
       on conflict (uuid) do nothing
       returning uuid, destination, answer, received_at`,
      [JSON.stringify(rows)],
    ),
  );
  const stored = new Map<string, SandboxReceipt>((inserted.rows as Parameters<typeof toReceipt>[0][]).map((row) => [row.uuid, toReceipt(row)]));
  const fresh = new Set(stored.keys());
  // Received before: the earlier receipts stand (read only then).
  const earlier = [...firstOf.keys()].filter((uuid) => !stored.has(uuid));
  if (earlier.length > 0) {
    for (const row of await knex('sandbox_receipts').whereIn('uuid', earlier).select('uuid', 'destination', 'answer', 'received_at')) stored.set(row.uuid, toReceipt(row));
  }
  const answered = new Set<string>();
  return receipts.map((r) => {
    const firstTime = fresh.has(r.uuid) && !answered.has(r.uuid);
    answered.add(r.uuid);
    return { receipt: stored.get(r.uuid)!, firstTime };
  });
}

export async function countSandboxReceipts(knex: Knex, uuid: string): Promise<number> {
  const [row] = await knex('sandbox_receipts').where({ uuid }).count({ n: '*' });
  return Number(row?.n ?? 0);
}
