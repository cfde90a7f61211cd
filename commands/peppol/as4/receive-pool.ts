/**
 * The AS4 endpoint's worker-thread pool (piscina): the CPU-bound steps of receiving run on
 * `threads` worker threads (./receive-worker.ts), so that every core serves messages while the
 * main thread does HTTP, the database and the read models. The queue is bounded: when `maxQueue`
 * messages wait already, `check` refuses at once (`As4Busy`, answered with HTTP 503, which a
 * sending access point retries); the signing of a receipt never waits on that bound (the purchase
 * is stored by then), and runs on the calling thread when the queue is full. `close` lets the
 * tasks in flight finish (queued ones too), then stops the threads.
 */
import { Piscina } from 'piscina';
import type { EbmsError, SignedReference } from '../../../domain/peppol/ebms.js';
import { errorEnvelope, receiptEnvelope, type SigningIdentity } from './message.js';
import { As4Busy, type As4Check, type As4Offload } from './receive.js';
import type { As4Task, As4WorkerData } from './receive-worker.js';

export interface As4Pool extends As4Offload {
  readonly threads: number;
  close(): Promise<void>;
}

export function createAs4ReceivePool(o: { identity: SigningIdentity; maxPayloadBytes: number; maxXmlBytes: number; threads: number; maxQueue?: number }): As4Pool {
  const maxQueue = o.maxQueue ?? 64 * o.threads;
  const data: As4WorkerData = {
    identity: { privateKeyPem: o.identity.privateKeyPem, certificatePem: o.identity.certificatePem, commonName: o.identity.commonName },
    maxPayloadBytes: o.maxPayloadBytes,
    maxXmlBytes: o.maxXmlBytes,
  };
  const pool = new Piscina({
    // The worker beside this module: receive-worker.ts under tsx, receive-worker.js compiled (dist/).
    filename: new URL(`./receive-worker${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url).href,
    minThreads: o.threads,
    maxThreads: o.threads,
    // Piscina's queue unbounded: `check` holds it to `maxQueue` (signing a receipt may pass it).
    // One task per thread at a time: a task is CPU work only.
    concurrentTasksPerWorker: 1,
    idleTimeout: Number.POSITIVE_INFINITY,
    workerData: data,
  });
  // Piscina's close waits only for tasks a thread has taken; tasks still queued (e.g. while the
  // threads start) would fail. The tasks in flight are kept here, and `close` waits for them first.
  const inFlight = new Set<Promise<unknown>>();
  const run = <T>(task: As4Task): Promise<T> => {
    const p = pool.run(task) as Promise<T>;
    inFlight.add(p);
    const forget = () => inFlight.delete(p);
    p.then(forget, forget);
    return p;
  };
  const full = () => pool.queueSize >= maxQueue;
  return {
    threads: o.threads,
    check(contentType, body) {
      if (full()) return Promise.reject(new As4Busy(`${pool.queueSize} AS4 messages are waiting for a worker thread`));
      return run<As4Check>({ op: 'check', contentType, body });
    },
    receipt(r: { refToMessageId: string; references: readonly SignedReference[]; timestamp: string }) {
      return full() ? Promise.resolve(receiptEnvelope(data.identity, r)) : run<string>({ op: 'receipt', ...r });
    },
    error(r: { refToMessageId: string | null; errors: readonly EbmsError[]; timestamp: string }) {
      return full() ? Promise.resolve(errorEnvelope(data.identity, r)) : run<string>({ op: 'error', ...r });
    },
    async close() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      await pool.close();
    },
  };
}
