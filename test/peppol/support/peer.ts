/**
 * The phase4 test peer from the tests' side: an independent Peppol AS4 implementation (phase4, Java)
 * that receives on a loopback port or sends one message per call. Built by test/peppol/peer/build.sh
 * into test/peppol/peer/target/ (git-ignored).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { peppolIdentifiersOf } from '../../../domain/peppol/identifiers.js';
import type { TestPki } from './pki.js';

export const PEER_JAR = fileURLToPath(new URL('../peer/target/phase4-test-peer.jar', import.meta.url));

/** Start-up of a JVM with phase4 takes seconds, more on a loaded machine. */
const READY_TIMEOUT_MS = 180_000;
const SEND_TIMEOUT_MS = 240_000;

function javaBinary(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
}

/** Options that make a short-lived JVM start and finish sooner; the work is small. */
const JVM_OPTIONS = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xshare:auto'];

export function peerAvailable(): { ok: true } | { ok: false; why: string } {
  const probe = spawnSync(javaBinary(), ['-version'], { encoding: 'utf8', timeout: 60_000 });
  if (probe.error || probe.status !== 0) return { ok: false, why: `java is not available (${probe.error?.message ?? probe.stderr.trim()})` };
  if (!existsSync(PEER_JAR)) return { ok: false, why: `the peer is not built (${PEER_JAR} missing; run test/peppol/peer/build.sh)` };
  return { ok: true };
}

/**
 * In a mocha `before`: skips the suite when the phase4 peer cannot run here (no Java, not built),
 * saying why; under CI a missing peer fails the suite instead.
 */
export function skipWithoutPeer(ctx: Mocha.Context): void {
  const available = peerAvailable();
  if (available.ok) return;
  if (process.env.CI === 'true') throw new Error(`phase4 peer not built under CI: ${available.why}`);
  console.log(`      skipped: phase4 peer not built (${available.why})`);
  ctx.skip();
}

export interface ReceivedMessage {
  messageId: string;
  payload: Buffer;
  sbdh: string;
  senderId: string;
  receiverId: string;
  documentTypeId: string;
  processId: string;
  countryC1: string;
  conversationId?: string;
}

export interface PeerReceiver {
  url: string;
  received(): Promise<ReceivedMessage[]>;
  waitFor(count: number, timeoutMs: number): Promise<ReceivedMessage[]>;
  stop(): Promise<void>;
}

export interface PeerSendResult {
  success: boolean;
  messageId: string;
  receiptVerified: boolean;
  errors: { code: string; detail: string }[];
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function tail(text: string, lines = 30): string {
  return text.split('\n').slice(-lines).join('\n');
}

async function readReceived(out: string): Promise<ReceivedMessage[]> {
  const entries = (await readdir(out, { withFileTypes: true })).filter((e) => e.isDirectory() && !e.name.startsWith('.'));
  const messages = await Promise.all(
    entries.map(async (e) => {
      const dir = join(out, e.name);
      const [metaText, payload, sbdh, info] = await Promise.all([
        readFile(join(dir, 'meta.json'), 'utf8'),
        readFile(join(dir, 'payload.xml')),
        readFile(join(dir, 'sbdh.xml'), 'utf8'),
        stat(dir),
      ]);
      const meta = JSON.parse(metaText) as Record<string, string>;
      const message: ReceivedMessage = {
        messageId: meta.messageId!,
        payload,
        sbdh,
        senderId: meta.senderId!,
        receiverId: meta.receiverId!,
        documentTypeId: meta.documentTypeId!,
        processId: meta.processId!,
        countryC1: meta.countryC1!,
      };
      if (meta.conversationId !== undefined) message.conversationId = meta.conversationId;
      return { message, at: info.mtimeMs };
    }),
  );
  return messages.sort((a, b) => a.at - b.at).map((m) => m.message);
}

/**
 * Starts the phase4 peer as an AS4 receiver on 127.0.0.1 (an ephemeral port unless given), with the
 * identity `pki.peer`, trusting only `pki.caCertPath`. Every accepted user message is answered with a
 * signed receipt and shows up in `received()`; a refused one gets an ebMS error and is not stored.
 */
export async function startPeerReceiver(opts: { pki: TestPki; port?: number }): Promise<PeerReceiver> {
  const out = await mkdtemp(join(tmpdir(), 'phase4-peer-in-'));
  const { pki } = opts;
  const child = spawn(
    javaBinary(),
    [
      ...JVM_OPTIONS.filter((o) => !o.startsWith('-XX:TieredStopAtLevel')),
      '-jar', PEER_JAR, 'receive',
      '--port', String(opts.port ?? 0),
      '--keystore', pki.peer.p12Path,
      '--password', pki.peer.p12Password,
      '--trust-ca', pki.caCertPath,
      '--out', out,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  live.add(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = tail(stderr + chunk, 200);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    live.delete(child);
    resolve(code);
  }));

  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`phase4 peer did not report READY within ${READY_TIMEOUT_MS} ms\n${tail(stderr)}`));
    }, READY_TIMEOUT_MS);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const ready = /^READY (\S+)$/m.exec(stdout);
      if (ready) {
        clearTimeout(timer);
        resolve(ready[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`phase4 peer exited (${code}) before it was ready\n${tail(stderr)}`));
    });
  });

  let stopped = false;
  return {
    url,
    received: () => readReceived(out),
    async waitFor(count, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const messages = await readReceived(out);
        if (messages.length >= count) return messages;
        if (Date.now() >= deadline) {
          throw new Error(`phase4 peer received ${messages.length} of ${count} messages within ${timeoutMs} ms\n${tail(stderr)}`);
        }
        if (child.exitCode !== null) throw new Error(`phase4 peer exited (${child.exitCode})\n${tail(stderr)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(killer);
      }
      await rm(out, { recursive: true, force: true });
    },
  };
}

/**
 * Sends one Peppol AS4 message with phase4-peppol-client to `to` (the receiver's certificate given) and
 * reports phase4's verdict: `success` when a receipt came back, `receiptVerified` when its signature,
 * its signer (really issued by the test CA) and its digests of what was sent all check out, `errors`
 * with the ebMS error codes of a refusal (or the peer's own codes for a local failure).
 */
export interface PeerSendOptions {
  pki: TestPki;
  to: string;
  receiverCertPem: string;
  payload: Buffer | string;
  senderId: string;
  receiverId: string;
  documentTypeId: string;
  processId: string;
  countryC1: string;
  messageId?: string;
  identity?: 'peer' | 'rogue' | 'expired';
  tamper?: 'signature';
  dumpRequestTo?: string;
}

/**
 * What phase4 needs to send the UBL document `xml` to the access point at `to` (whose certificate is
 * `receiverCertPem`): sender, receiver, document type, process and C1 country read from the document
 * itself, as the service's own sending side reads them; `extra` overrides any of them.
 */
export function peerSendOf(pki: TestPki, to: string, receiverCertPem: string, xml: string, extra: Partial<PeerSendOptions> = {}): PeerSendOptions {
  const ids = peppolIdentifiersOf(xml);
  return {
    pki,
    to,
    receiverCertPem,
    payload: xml,
    senderId: ids.sender.value,
    receiverId: ids.receiver.value,
    documentTypeId: ids.documentTypeId,
    processId: ids.processId,
    countryC1: ids.sellerCountry ?? 'AE',
    ...extra,
  };
}

/** Runs the peer once in a send mode and returns its last JSON line. */
async function runSendMode<T>(mode: 'send' | 'send-many', opts: PeerSendOptions, extra: string[]): Promise<T> {
  const work = await mkdtemp(join(tmpdir(), 'phase4-peer-send-'));
  try {
    const payloadPath = join(work, 'payload.xml');
    const receiverCertPath = join(work, 'receiver.cert.pem');
    await writeFile(payloadPath, opts.payload);
    await writeFile(receiverCertPath, opts.receiverCertPem);
    const identity = opts.pki[opts.identity ?? 'peer'];
    const args = [
      // A load runs long enough for the optimising compiler to pay off.
      ...(mode === 'send' ? JVM_OPTIONS : JVM_OPTIONS.filter((o) => !o.startsWith('-XX:TieredStopAtLevel'))),
      '-jar', PEER_JAR, mode,
      '--to', opts.to,
      '--keystore', identity.p12Path,
      '--password', identity.p12Password,
      '--trust-ca', opts.pki.caCertPath,
      '--receiver-cert', receiverCertPath,
      '--payload', payloadPath,
      '--sender-id', opts.senderId,
      '--receiver-id', opts.receiverId,
      '--doctype', opts.documentTypeId,
      '--process', opts.processId,
      '--country-c1', opts.countryC1,
      ...extra,
    ];
    if (opts.messageId) args.push('--message-id', opts.messageId);
    if (opts.tamper) args.push('--tamper', opts.tamper);
    if (opts.dumpRequestTo) args.push('--dump-request', opts.dumpRequestTo);
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(javaBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
      live.add(child);
      let out = '';
      let err = '';
      child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
      child.stderr!.setEncoding('utf8').on('data', (c: string) => (err = tail(err + c, 200)));
      const timer = mode === 'send' ? setTimeout(() => child.kill('SIGKILL'), SEND_TIMEOUT_MS) : undefined;
      child.once('error', reject);
      child.once('exit', (exitCode) => {
        clearTimeout(timer);
        live.delete(child);
        resolve({ code: exitCode, stdout: out, stderr: err });
      });
    });
    const line = stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
    if (code !== 0 || !line) throw new Error(`phase4 peer ${mode} failed (exit ${code})\n${stdout}\n${tail(stderr)}`);
    return JSON.parse(line) as T;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * Sends one Peppol AS4 message with phase4-peppol-client to `to` (the receiver's certificate given) and
 * reports phase4's verdict: `success` when a receipt came back, `receiptVerified` when its signature,
 * its signer (really issued by the test CA) and its digests of what was sent all check out, `errors`
 * with the ebMS error codes of a refusal (or the peer's own codes for a local failure).
 */
export function peerSend(opts: PeerSendOptions): Promise<PeerSendResult> {
  return runSendMode<PeerSendResult>('send', opts, []);
}

export interface PeerSendManyResult {
  sent: number;
  succeeded: number;
  receiptsVerified: number;
  seconds: number;
  messagesPerSecond: number;
  /** The first few errors, if any. */
  errors: { code: string; detail: string }[];
}

/**
 * A load from phase4 for benchmarks: `count` messages over `concurrency` threads of one JVM, each with
 * its own AS4 message id (and SBDH instance identifier); the text {{SEQ}} in the payload becomes the
 * message's sequence number. `seconds` covers the sending only, not the JVM's start.
 */
export function peerSendMany(opts: Omit<PeerSendOptions, 'messageId' | 'tamper' | 'dumpRequestTo'> & { count: number; concurrency: number }): Promise<PeerSendManyResult> {
  return runSendMode<PeerSendManyResult>('send-many', opts, ['--count', String(opts.count), '--concurrency', String(opts.concurrency)]);
}

/**
 * What phase4's own Peppol CA check (`PeppolCAChecker` on the test CA) says of a certificate, next to a
 * real check of the CA's signature on it and of its validity period. phase4's check compares the issuer's
 * name, so it calls a certificate of another CA with a copied name "valid": the peer therefore verifies
 * signatures itself (and WSS4J validates the path against the CA as the only trust anchor).
 */
export async function peerCheckCertificate(caCertPath: string, certPath: string): Promise<{ peppolCAChecker: string; signedByCA: boolean; validNow: boolean }> {
  const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) => {
    const child = spawn(javaBinary(), [...JVM_OPTIONS, '-jar', PEER_JAR, 'check-cert', '--trust-ca', caCertPath, '--cert', certPath], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (err = tail(err + c, 50)));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve({ stdout: out }) : reject(new Error(`phase4 peer check-cert failed (${code})\n${err}`))));
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as { peppolCAChecker: string; signedByCA: boolean; validNow: boolean };
}
