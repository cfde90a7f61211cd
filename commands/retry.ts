/**
 * One retry helper for expected-version conflicts, over the `p-retry` library: a command that
 * lost the race for its stream's expected revision runs again on the fresher state. Either a
 * number of immediate attempts (`maxAttempts`), or a time budget (`budgetMs`) with a jittered
 * exponential back-off so that writers that collided spread out instead of colliding again.
 * When the attempts or the budget are spent, `onSpent` turns the last conflict into the error
 * the caller throws (ConcurrencyConflictError: every API family answers it with its 409).
 */
import pRetry from 'p-retry';

/** Default time budget of a command's conflict retries. */
export const CONFLICT_RETRY_BUDGET_MS = 5000;
const BACKOFF_MIN_MS = 1;
const BACKOFF_CAP_MS = 100;

export interface ConflictRetryOptions {
  /** Whether the error is a lost race worth another attempt; anything else is thrown at once. */
  isConflict: (err: unknown) => boolean;
  /** Immediate attempts (no pause) before giving up. */
  maxAttempts?: number;
  /** Time budget of back-off retries (default CONFLICT_RETRY_BUDGET_MS); used without maxAttempts. */
  budgetMs?: number;
  /** The error to throw once the attempts or the budget are spent (default: the last conflict). */
  onSpent?: (lastConflict: unknown, attempts: number) => unknown;
}

/** Runs `attempt(n)` (n from 1) until it returns, a non-conflict error is thrown, or the retries are spent. */
export async function retryOnConflict<T>(attempt: (n: number) => Promise<T>, options: ConflictRetryOptions): Promise<T> {
  let attempts = 0;
  let last: unknown;
  const timing =
    options.maxAttempts === undefined
      ? { retries: Number.POSITIVE_INFINITY, maxRetryTime: options.budgetMs ?? CONFLICT_RETRY_BUDGET_MS, minTimeout: BACKOFF_MIN_MS, maxTimeout: BACKOFF_CAP_MS, factor: 2, randomize: true }
      : { retries: Math.max(0, options.maxAttempts - 1), minTimeout: 0, maxTimeout: 0 };
  try {
    return await pRetry(
      async () => {
        attempts++;
        try {
          return await attempt(attempts);
        } catch (err) {
          last = err;
          throw err;
        }
      },
      { ...timing, shouldRetry: () => options.isConflict(last) },
    );
  } catch {
    // The thrown value itself (p-retry would wrap a non-Error), or the caller's "spent" error.
    if (options.isConflict(last) && options.onSpent) throw options.onSpent(last, attempts);
    throw last;
  }
}
