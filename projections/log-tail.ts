/**
 * The tail of the global log, read once and shared by every runner of a process. Without it
 * each projection and reactor reads the same new events from the store on every append.
 *
 * The cache holds a contiguous run of events: everything the store returned after `start`, in
 * position order. Because the store's readAll never skips an event (it reads below the oldest
 * transaction in flight), extending the run from its last position keeps it gap-free. A reader
 * inside the run is served from memory; near its end one read (shared by all who arrive
 * meanwhile) extends it first; a reader before the run (a projection catching up) reads the store.
 */
import { comparePositions, type EventStore, type Position, type RecordedEvent } from '../commands/eventstore/port.js';

export class LogTail {
  private events: RecordedEvent[] = [];
  /** Exclusive lower bound of the cached run (null: nothing cached). */
  private start: Position | null = null;
  private extending: Promise<void> | null = null;

  /**
   * `maxEvents` bounds the memory: runners in step are within a read or two of each other, and
   * events can be large (a submitted document carries its XML), so the run keeps two reads' worth
   * by default. A runner that falls further behind reads the store until it catches up.
   */
  constructor(
    private readonly store: Pick<EventStore, 'readAll'>,
    private readonly readSize = 1000,
    private readonly maxEvents = 2 * readSize,
  ) {}

  private get end(): Position | null {
    return this.events.length > 0 ? this.events[this.events.length - 1]!.position : this.start;
  }

  /** Index of the first cached event strictly after `after` (the run must cover `after`). */
  private indexAfter(after: Position): number {
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (comparePositions(this.events[mid]!.position, after) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private covers(after: Position): boolean {
    return this.start !== null && comparePositions(after, this.start) >= 0 && comparePositions(after, this.end!) <= 0;
  }

  private extend(): Promise<void> {
    this.extending ??= (async () => {
      try {
        const from = this.end!;
        const more = await this.store.readAll(from, this.readSize);
        // The run may have been re-anchored meanwhile; append only if it still ends at `from`.
        if (more.length > 0 && this.end && comparePositions(this.end, from) === 0) {
          this.events.push(...more);
          if (this.events.length > this.maxEvents) {
            const drop = this.events.length - this.maxEvents;
            this.start = this.events[drop - 1]!.position;
            this.events = this.events.slice(drop);
          }
        }
      } finally {
        this.extending = null;
      }
    })();
    return this.extending;
  }

  async readAll(after: Position, limit: number): Promise<RecordedEvent[]> {
    if (this.covers(after)) {
      // A short answer tells a runner it has caught up, so read on first when the run ends
      // within the reader's limit (one read serves everyone who arrives meanwhile).
      if (this.indexAfter(after) + limit > this.events.length) {
        await this.extend();
        if (!this.covers(after)) return this.store.readAll(after, limit);
      }
      const i = this.indexAfter(after);
      return this.events.slice(i, i + limit);
    }
    const events = await this.store.readAll(after, limit);
    // A reader ahead of the run (or the first one) moves the shared run to where it reads.
    if (this.start === null || comparePositions(after, this.end!) > 0) {
      this.start = after;
      this.events = events.slice(0, this.maxEvents);
    }
    return events;
  }
}
