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
import { comparePositions, endedByBytes, markEndedByBytes, pageBytes, type EventStore, type Position, type ReadAllOptions, type RecordedEvent } from '../platform/eventstore/port.js';

/**
 * A store read held in the run: where it ends (index after its last event), whether more followed
 * it at once, and its size in bytes when the store reported it (at most the read's maxBytes).
 */
interface Page {
  end: number;
  cut: boolean;
  bytes?: number;
}

export class LogTail {
  private events: RecordedEvent[] = [];
  /** The store reads the run is made of, in order (by byte-bounded reads, each at most `maxBytes`). */
  private pages: Page[] = [];
  /** Exclusive lower bound of the cached run (null: nothing cached). */
  private start: Position | null = null;
  private extending: Promise<void> | null = null;

  /**
   * `maxEvents` bounds the memory: runners in step are within a read or two of each other, and
   * events can be large (a submitted document carries its XML), so the run keeps two reads' worth
   * by default. With `maxBytes` every store read is also bounded by bytes and the run keeps reads
   * adding up to at most `maxReads` × `maxBytes` of events however large they are (by the sizes the
   * store reports; a read of unknown size counts as `maxBytes`), so a catch-up on large events still
   * shares the reads of runners a few batches apart, and while the log grows by small reads the run
   * still spans the log a slow runner's batch takes to apply; readers that pass `maxBytes` are served
   * within one read's events while they are within `maxReads` reads of the run's end, and within
   * as many reads as fit their bound further behind. A runner that falls behind the run reads the
   * store until it catches up.
   */
  constructor(
    private readonly store: Pick<EventStore, 'readAll'>,
    private readonly readSize = 1000,
    private readonly maxEvents = 2 * readSize,
    private readonly maxBytes?: number,
    private readonly maxReads = 2,
  ) {}

  private get end(): Position | null {
    return this.events.length > 0 ? this.events[this.events.length - 1]!.position : this.start;
  }

  private get storeOptions(): ReadAllOptions {
    return this.maxBytes === undefined ? {} : { maxBytes: this.maxBytes };
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

  /** Forgets the first `n` events of the run. */
  private dropFront(n: number): void {
    if (n <= 0) return;
    this.start = this.events[n - 1]!.position;
    this.events = this.events.slice(n);
    this.pages = this.pages.map((p) => ({ ...p, end: p.end - n })).filter((p) => p.end > 0);
  }

  /**
   * How many events to drop from the front so that the reads kept add up to at most `maxReads` ×
   * `maxBytes` (a read whose size the store did not report counts as `maxBytes`); the newest read
   * is always kept. While the log grows each read holds the few events appended since the one
   * before, so a bound on the number of reads would keep only the last few milliseconds of the
   * log, and a runner whose batch takes longer (a reactor, a busy read model) would fall out of
   * the run and read the same events from the store again.
   */
  private overBudget(): number {
    if (this.maxBytes === undefined) return 0;
    const budget = this.maxReads * this.maxBytes;
    let bytes = 0;
    for (let k = this.pages.length - 1; k >= 0; k--) {
      bytes += this.pages[k]!.bytes ?? this.maxBytes;
      if (bytes > budget && k < this.pages.length - 1) return this.pages[k]!.end;
    }
    return 0;
  }

  private extend(): Promise<void> {
    this.extending ??= (async () => {
      try {
        const from = this.end!;
        const more = await this.store.readAll(from, this.readSize, this.storeOptions);
        // The run may have been re-anchored meanwhile; append only if it still ends at `from`.
        if (more.length > 0 && this.end && comparePositions(this.end, from) === 0) {
          this.events.push(...more);
          this.pages.push({ end: this.events.length, cut: endedByBytes(more) || more.length >= this.readSize, bytes: pageBytes(more) });
          this.dropFront(Math.max(this.events.length - this.maxEvents, this.overBudget()));
        }
      } finally {
        this.extending = null;
      }
    })();
    return this.extending;
  }

  async readAll(after: Position, limit: number, options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    if (this.covers(after)) {
      // A short answer tells a runner it has caught up, so read on first when the run ends
      // within the reader's limit (one read serves everyone who arrives meanwhile).
      if (this.indexAfter(after) + limit > this.events.length) {
        await this.extend();
        if (!this.covers(after)) return this.store.readAll(after, limit, options);
      }
      const i = this.indexAfter(after);
      let end = Math.min(i + limit, this.events.length);
      if (options.maxBytes === undefined) return this.events.slice(i, end);
      // Within the store read that holds event i: at most one read's bytes, while the reader is
      // within `maxReads` reads of the run's end. A reader further behind is served the following
      // reads too while all their bytes together stay within its bound: it is as far behind as a
      // run of `maxReads` reads would have let it fall, and the store would have answered it with
      // a page of up to its bounds (the same batch, without reading those events again).
      const at = this.pages.findIndex((p) => p.end > i);
      let page = at >= 0 ? this.pages[at] : undefined;
      const across = this.pages.length - at > this.maxReads;
      if (page && across && page.bytes !== undefined) {
        let bytes = page.bytes;
        for (let k = at + 1; k < this.pages.length && page.end < end; k++) {
          const next = this.pages[k]!;
          if (next.bytes === undefined || bytes + next.bytes > options.maxBytes) break;
          bytes += next.bytes;
          page = next;
        }
      }
      if (page && page.end < end) end = page.end;
      const answer = this.events.slice(i, end);
      const more = end < this.events.length || (page !== undefined && page.end === end && page.cut);
      return answer.length > 0 && answer.length < limit && more ? markEndedByBytes(answer) : answer;
    }
    const events = await this.store.readAll(after, limit, options);
    // A reader ahead of the run (or the first one) moves the shared run to where it reads.
    if (this.start === null || comparePositions(after, this.end!) > 0) {
      this.start = after;
      this.events = events.slice(0, this.maxEvents);
      const cut = endedByBytes(events) || events.length >= limit || events.length > this.events.length;
      this.pages = this.events.length === 0 ? [] : [{ end: this.events.length, cut, bytes: events.length === this.events.length ? pageBytes(events) : undefined }];
    }
    return events;
  }
}
