/**
 * The session-level advisory locks by which one service instance owns the projections it runs
 * (projections/ownership.ts), held on one connection of their own outside the pool: a pooled
 * connection goes back to the pool after each statement, and a session lock must live as long as
 * its holder. Closing the connection (the holder stops, exits, or loses it) releases every lock
 * it holds.
 *
 * The keys are in PostgreSQL's two-key space (class, object), which never overlaps the one-key
 * space of the transaction-scoped locks a batch takes (readmodels/checkpoints.ts): owning a
 * projection does not stand in the way of its batches, which keep their own lock.
 */
import type { Knex } from 'knex';
import type pg from 'pg';

/** The class key of the ownership locks; the object key is hashtext of the checkpoint's name. */
const OWNER_CLASS = 'projection owner';

/** The longest one statement on the ownership connection may take before the connection counts as lost. */
const STATEMENT_TIMEOUT_MS = 5000;

/** knex's PostgreSQL client opens and closes connections outside its pool with these. */
interface RawConnections {
  acquireRawConnection(): Promise<pg.Client>;
  destroyRawConnection(connection: pg.Client): Promise<void>;
}

export interface OwnershipConnection {
  /**
   * Takes the ownership locks of those `checkpoints` that are free, in one statement; returns the
   * ones taken. Ask only for checkpoints not owned on this connection yet (a session lock taken
   * twice is held twice).
   */
  tryOwn(checkpoints: readonly string[]): Promise<string[]>;
  /** Whether the connection still works (false once it failed or ended). */
  readonly alive: boolean;
  /** Closes the connection, which releases every ownership lock it holds. */
  close(): Promise<void>;
}

/**
 * Opens the ownership connection with the database settings of `knex` (not from its pool).
 * `onLost` is called once when the connection fails or ends while open.
 */
export async function openOwnershipConnection(knex: Knex, onLost: (reason: string) => void): Promise<OwnershipConnection> {
  const raw = knex.client as unknown as RawConnections;
  const opening = raw.acquireRawConnection();
  const client = await withTimeout(opening, 'opening the ownership connection').catch((err: unknown) => {
    // One that opens after all is closed at once.
    void opening.then((late) => raw.destroyRawConnection(late)).catch(() => {});
    throw err;
  });
  let alive = true;
  let closing = false;
  const lost = (reason: string) => {
    if (!alive) return;
    alive = false;
    if (!closing) onLost(reason);
  };
  client.on('error', (err: Error) => lost(err.message));
  client.on('end', () => lost('connection ended'));
  const end = async () => {
    closing = true;
    alive = false;
    await raw.destroyRawConnection(client).catch(() => {});
  };
  return {
    get alive() {
      return alive;
    },
    async tryOwn(checkpoints) {
      if (!alive || checkpoints.length === 0) return [];
      try {
        const { rows } = await withTimeout(
          client.query<{ name: string }>(
            `select c.name from unnest($2::text[]) with ordinality as c(name, i)
              where pg_try_advisory_lock(hashtext($1), hashtext(c.name)) order by c.i`,
            [OWNER_CLASS, [...checkpoints]],
          ),
          'taking ownership locks',
        );
        return rows.map((r) => r.name);
      } catch (err) {
        // Whatever it took may be held or not: the connection is given up (closing it releases it all).
        lost(err instanceof Error ? err.message : String(err));
        await end();
        return [];
      }
    },
    close: end,
  };
}

async function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${STATEMENT_TIMEOUT_MS} ms`)), STATEMENT_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The checkpoints whose ownership lock some session holds (tests, diagnostics). */
export async function ownedCheckpoints(knex: Knex, checkpoints: readonly string[]): Promise<string[]> {
  const { rows } = await knex.raw(
    `select c.name from unnest(?::text[]) as c(name)
      where exists (select 1 from pg_locks l
                     where l.locktype = 'advisory' and l.granted and l.database = (select oid from pg_database where datname = current_database())
                       and l.objsubid = 2 and l.classid = (hashtext(?) :: oid) and l.objid = (hashtext(c.name) :: oid))`,
    [[...checkpoints], OWNER_CLASS],
  );
  return (rows as { name: string }[]).map((r) => r.name);
}
