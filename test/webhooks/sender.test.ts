/** The webhook sender's safety rules and the judgement of answers, against a real local receiver. */
import { expect } from 'chai';
import { sendWebhook } from '../../commands/webhooks/sender.js';
import { judgeAttempt } from '../../domain/webhooks/delivery.js';
import { retryDelayAfter } from '../../domain/webhooks/values.js';
import { ManualClock } from '../../platform/clock.js';
import { startReceiver, type Receiver } from './support.js';

describe('webhooks: sender', function () {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver(new ManualClock());
  });
  after(async () => receiver.close());

  const send = (url: string, allowPrivateTargets: boolean, environment: 'sandbox' | 'production' = 'sandbox', timeoutMs = 1000) =>
    sendWebhook(url, '{"eventId":"x"}', { 'Content-Type': 'application/json' }, environment, { allowPrivateTargets, timeoutMs });

  it('refuses private targets unless sandbox and allowed, before connecting', async () => {
    const route = receiver.route([200]);
    const refused = await send(route.url, false);
    expect(refused).to.include({ kind: 'refused' });
    expect(route.received).to.have.length(0);
    expect(await send(route.url, true, 'production')).to.include({ kind: 'refused' });
    expect(route.received).to.have.length(0);
    const ok = await send(route.url, true);
    expect(ok).to.include({ kind: 'answered', statusCode: 200 });
    expect(route.received).to.have.length(1);
    // A name that resolves to a loopback address is refused after resolution too.
    expect(await send(route.url.replace('127.0.0.1', 'localhost'), false)).to.include({ kind: 'refused' });
  });

  it('follows no redirect, reads at most 1 KB of an answer, and times out', async () => {
    const redirect = receiver.route([{ status: 302, delayMs: 0, body: '' }]);
    const r = await send(redirect.url, true);
    expect(r).to.include({ kind: 'answered', statusCode: 302 });
    expect(judgeAttempt(r, 1, new Date(0))).to.include({ outcome: 'failed', nextAttemptAt: null });
    const big = receiver.route([{ status: 200, delayMs: 0, body: 'x'.repeat(200_000) }]);
    const b = await send(big.url, true);
    expect(b.kind).to.equal('answered');
    expect(b.kind === 'answered' && b.responseBody!.length).to.equal(1024);
    const hang = receiver.route(['hang']);
    const h = await send(hang.url, true, 'sandbox', 200);
    expect(h.kind).to.equal('timeout');
  });

  it('judges answers: 2xx delivered, 4xx permanent, 5xx/time-out/network retried on the schedule, the fifth failure final', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const answered = (statusCode: number) => ({ kind: 'answered' as const, statusCode, durationMs: 1, responseBody: null });
    expect(judgeAttempt(answered(204), 1, at).outcome).to.equal('delivered');
    expect(judgeAttempt(answered(410), 1, at)).to.include({ outcome: 'failed', nextAttemptAt: null });
    expect(judgeAttempt(answered(500), 1, at)).to.include({ outcome: 'retry', nextAttemptAt: '2026-01-01T00:01:00.000Z' });
    expect(judgeAttempt({ kind: 'timeout', durationMs: 10_000 }, 2, at)).to.include({ outcome: 'retry', nextAttemptAt: '2026-01-01T00:05:00.000Z', error: 'TIMEOUT' });
    expect(judgeAttempt({ kind: 'network', durationMs: 1, error: 'ECONNRESET' }, 3, at)).to.include({ outcome: 'retry', nextAttemptAt: '2026-01-01T00:15:00.000Z' });
    expect(judgeAttempt(answered(503), 4, at)).to.include({ outcome: 'retry', nextAttemptAt: '2026-01-01T00:15:00.000Z' });
    expect(judgeAttempt(answered(503), 5, at)).to.include({ outcome: 'failed', nextAttemptAt: null });
    expect([1, 2, 3, 4, 5].map(retryDelayAfter)).to.deep.equal([60_000, 300_000, 900_000, 900_000, null]);
  });
});
