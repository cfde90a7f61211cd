/**
 * A worker thread of the AS4 endpoint's pool (./receive-pool.ts): runs the CPU-bound steps of
 * receiving — MIME, decryption, the signature, decompression, the SBDH, the purchases import's
 * content checks (`checkAs4Request`) — and signs the receipts and error signals, with this
 * access point's identity handed over when the thread starts. Results are plain data.
 */
import { workerData } from 'node:worker_threads';
import type { EbmsError, SignedReference } from '../../../domain/peppol/ebms.js';
import { errorEnvelope, receiptEnvelope, type SigningIdentity } from './message.js';
import { checkAs4Request, type As4Check } from './receive.js';

export interface As4WorkerData {
  identity: SigningIdentity;
  maxPayloadBytes: number;
  maxXmlBytes: number;
}

export type As4Task =
  | { op: 'check'; contentType: string | undefined; body: Uint8Array }
  | { op: 'receipt'; refToMessageId: string; references: readonly SignedReference[]; timestamp: string }
  | { op: 'error'; refToMessageId: string | null; errors: readonly EbmsError[]; timestamp: string };

const config = workerData as As4WorkerData;

export default async function run(task: As4Task): Promise<As4Check | string> {
  switch (task.op) {
    case 'check':
      return checkAs4Request({ privateKeyPem: config.identity.privateKeyPem, maxPayloadBytes: config.maxPayloadBytes, maxXmlBytes: config.maxXmlBytes }, task.contentType, task.body);
    case 'receipt':
      return receiptEnvelope(config.identity, task);
    case 'error':
      return errorEnvelope(config.identity, task);
  }
}
