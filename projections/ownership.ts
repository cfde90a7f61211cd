/**
 * Which service instance runs which projection. Each runner holds, on one connection of its own, a
 * session-level advisory lock per projection it runs (readmodels/projection-ownership.ts); a
 * projection owned elsewhere is followed through its checkpoint, and its ownership is tried again
 * at every claim round (about once a second), so when its owner stops, exits or loses its
 * connection another instance takes it over within about a round.
 *
 * Ownership only keeps two instances from taking turns at a projection's batches (each turn made
 * the new holder read the log afresh from the checkpoint); the batches' own transaction-scoped
 * lock and the checkpoint's compare-and-set (projections/runner.ts) stay what keeps a batch from
 * being applied twice. While the connection is unavailable every projection runs as if nobody
 * owned it (the batch lock decides), and the connection is opened again at a later round.
 *
 * Modes:
 * - `gather` (default): the instance that owns the first projection takes the others in the same
 *   round; one that finds the first owned elsewhere takes, from its next round on, only
 *   projections nobody owns (none, unless that owner does not run them). So instances that start
 *   together do not split the projections: one runs them all and the others read no log for them
 *   (a split would have each instance read the whole log for its share);
 * - `off`: no ownership (every instance tries every batch, the batch lock decides).
 */
import type { Knex } from 'knex';
import { openOwnershipConnection, type OwnershipConnection } from '../readmodels/projection-ownership.js';

export type OwnershipMode = 'gather' | 'off';

/** What a runner's loop does with its projection: runs it (`run`: owned, or nobody can tell) or follows another instance (`follow`). */
export type OwnershipRole = 'run' | 'follow';

export class ProjectionOwnership {
  private connection: OwnershipConnection | null = null;
  private readonly owned = new Set<string>();
  /** Set after the first claim round (loops wait for it, so two instances starting together do not both begin). */
  private claimed = false;
  private closed = false;
  /** Whether the last claim round found the first projection owned elsewhere (gather). */
  private lostFirst = false;
  /** Whether the loss of the connection is logged already (logged once until it is back). */
  private down = false;

  constructor(
    private readonly knex: Knex,
    private readonly names: readonly string[],
    private readonly mode: OwnershipMode,
    private readonly log: (msg: string, fields?: Record<string, unknown>) => void,
  ) {}

  role(name: string): OwnershipRole {
    if (this.mode === 'off' || !this.claimed || this.owned.has(name)) return 'run';
    // Without a working connection nobody here can tell: run as before ownership (the batch lock decides).
    return this.connection?.alive ? 'follow' : 'run';
  }

  /** The projections this runner owns now. */
  ownedNow(): string[] {
    return this.names.filter((n) => this.owned.has(n));
  }

  /** One claim round: opens the connection when there is none, and tries the projections not owned yet. Never throws. */
  async claim(): Promise<void> {
    if (this.mode === 'off' || this.closed || this.names.length === 0) return;
    try {
      if (!this.connection?.alive) {
        this.owned.clear();
        this.connection = null;
        const connection = await openOwnershipConnection(this.knex, (reason) => {
          this.owned.clear();
          this.unavailable(reason);
        });
        if (this.closed) {
          await connection.close();
          return;
        }
        this.connection = connection;
        if (this.down) this.log('projection ownership connection back');
        this.down = false;
      }
      const wanted = this.names.filter((n) => !this.owned.has(n));
      if (wanted[0] === this.names[0]) {
        // The first projection decides who gathers them: its new owner takes the others in the same round.
        const first = await this.connection.tryOwn([this.names[0]!]);
        const lostBefore = this.lostFirst;
        this.lostFirst = first.length === 0;
        if (first.length > 0) this.owned.add(this.names[0]!);
        // Its owner elsewhere has had a whole round to take the others: only those nobody owns are taken (a
        // projection that instance does not run, e.g. one a newer version added during a rolling deploy).
        else if (!lostBefore) return;
        wanted.shift();
      }
      for (const name of await this.connection.tryOwn(wanted)) this.owned.add(name);
    } catch (err) {
      this.unavailable(err instanceof Error ? err.message : String(err));
    } finally {
      this.claimed = true;
    }
  }

  private unavailable(reason: string): void {
    if (this.down || this.closed) return;
    this.down = true;
    this.log('projection ownership connection unavailable: every projection runs under its batch lock alone until it is back', { error: reason });
  }

  /** Closes the connection: every projection this runner owned is free for another instance. */
  async close(): Promise<void> {
    this.closed = true;
    this.owned.clear();
    const connection = this.connection;
    this.connection = null;
    await connection?.close();
  }
}
