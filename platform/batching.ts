/**
 * Look-ups and writes that concurrent work issues one at a time, sent as one statement (issue 19).
 *
 * The delivery reactor works on a batch's documents at once, and each document's delivery asks
 * the same questions of the database (the sandbox network's receivers of a participant id, the
 * sandbox destination's receipt). Issued one by one, each is a round trip of its own; a batcher
 * (DataLoader) collects the calls made until the event loop's check phase (`setImmediate`) and
 * hands them to one function that answers them all with one statement. Every call made in the
 * same turn of the loop, however many promise hops it took to get there, joins the batch; a lone
 * call waits for nothing but the rest of the current turn.
 *
 * Not a cache: every call is answered by the database (two calls with the same key in one batch
 * are two entries of it, which the batch function must tell apart where that matters).
 */
import DataLoader from 'dataloader';

/** Most calls one statement answers. */
const MAX_BATCH = 500;

/**
 * A batcher of `answer`: it gets the keys of the calls made in one turn of the event loop, in
 * order (duplicates included), and returns one result per key, in the same order (an Error as a
 * key's result fails that call alone).
 */
export function turnBatcher<K, V>(answer: (keys: readonly K[]) => Promise<readonly (V | Error)[]>): (key: K) => Promise<V> {
  const loader = new DataLoader<K, V>((keys) => answer(keys), { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: (run) => setImmediate(run) });
  return (key) => loader.load(key);
}
