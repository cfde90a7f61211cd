/**
 * Recent answers of a read-model lookup that runs for every request (an API key, a submission's
 * source and company), kept per instance for at most `ttlMs` (default 1 s) in a bounded LRU, so
 * each distinct lookup reads the database at most about once per `ttlMs` on an instance. Callers
 * asking for the same key while it is being read share that read. A change made through this
 * instance drops the answers it affects (`forget`), after its read model holds the change; a
 * change made through another instance (or the admin CLI) shows within `ttlMs`.
 */
import { LRUCache } from 'lru-cache';

export interface RecentLookupsOptions<V> {
  ttlMs?: number;
  maxEntries?: number;
  /** Whether an answer may be kept (e.g. not a miss); every answer is kept by default. */
  keep?: (value: V) => boolean;
  now?: () => number;
}

export class RecentLookups<V> {
  private readonly entries: LRUCache<string, { answer: Promise<V>; at: number }>;
  private readonly ttlMs: number;
  private readonly keep: (value: V) => boolean;
  private readonly now: () => number;

  constructor(options: RecentLookupsOptions<V> = {}) {
    this.ttlMs = options.ttlMs ?? 1000;
    this.keep = options.keep ?? (() => true);
    this.now = options.now ?? Date.now;
    this.entries = new LRUCache({ max: options.maxEntries ?? 10_000 });
  }

  /** The recent answer for `key`, or `load`'s (kept for the next callers); `fresh`: always `load`. */
  get(key: string, load: () => Promise<V>, options: { fresh?: boolean } = {}): Promise<V> {
    const hit = this.entries.get(key);
    if (!options.fresh && hit && this.now() - hit.at < this.ttlMs) return hit.answer;
    const entry = { answer: load(), at: this.now() };
    this.entries.set(key, entry);
    const drop = () => {
      if (this.entries.peek(key) === entry) this.entries.delete(key);
    };
    entry.answer.then((value) => (this.keep(value) ? undefined : drop()), drop);
    return entry.answer;
  }

  /** Drops every answer whose key starts with `prefix` (all of them for ''). */
  forget(prefix = ''): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}
