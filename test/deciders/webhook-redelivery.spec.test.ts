/** The webhook redelivery decider and request parsing (docs/api/webhooks.md) as specifications (no I/O). */
import { expect } from 'chai';
import { DomainError } from '../../domain/errors.js';
import { REDELIVERY_LIMITS, parseRedeliveryBody, redeliveredDeliveryId, redeliveryDecider, type RedeliveryCandidate, type RedeliveryCommand } from '../../domain/webhooks/redelivery.js';
import type { Subscription } from '../../domain/webhooks/subscription.js';
import { deciderSpecification } from '../support/decider-spec.js';

const now = '2026-05-08T10:00:00.000Z';
const subscription: Subscription = {
  subscriptionId: 'whk_1',
  workspaceId: 'ws_a',
  environment: 'sandbox',
  webhookUrl: 'https://example.com/hook',
  events: ['document.status.changed'],
  secretKey: null,
  signatureAlgorithm: 'sha256',
  description: null,
  active: true,
  createdAt: now,
  updatedAt: now,
  deleted: false,
};
const candidate = (n: number, extra: Partial<RedeliveryCandidate> = {}): RedeliveryCandidate => ({
  deliveryId: `whd_${String(n).padStart(24, '0')}`,
  eventId: `e_${n}`,
  eventType: 'document.status.changed',
  occurredAt: '2026-05-08T09:00:00.000Z',
  pending: false,
  ...extra,
});
const command = (over: Partial<RedeliveryCommand> = {}): RedeliveryCommand => ({
  type: 'RequestRedelivery',
  redeliveryId: 'whr_1',
  workspaceId: 'ws_a',
  subscription,
  request: { kind: 'delivery', deliveryId: candidate(1).deliveryId },
  candidates: [candidate(1)],
  now,
  ...over,
});

function refusal(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('decider specification: webhook redelivery', () => {
  const given = deciderSpecification(redeliveryDecider);

  it('redelivers one delivery as a new delivery of the same event, once per redelivery', () => {
    given([])
      .when(command())
      .then((events) => {
        expect(events).to.have.length(1);
        const d = events[0]!.data;
        expect(d.deliveries).to.deep.equal([{ deliveryId: redeliveredDeliveryId('whr_1', candidate(1).deliveryId), redeliveryOf: candidate(1).deliveryId, eventId: 'e_1', eventType: 'document.status.changed' }]);
        expect(d.request).to.deep.equal({ deliveryId: candidate(1).deliveryId, since: null, until: null });
      });
    given([{ type: 'WebhookRedeliveryRequested', data: {} } as never]).when(command()).thenNothingHappened();
  });

  it('refuses a deleted, foreign or paused subscription, an unknown delivery, a ping, a pending event and an event past the window', () => {
    given([]).when(command({ subscription: { ...subscription, deleted: true } })).thenThrows('CONNECT_WEBHOOK_NOT_FOUND');
    given([]).when(command({ workspaceId: 'ws_b' })).thenThrows('CONNECT_WEBHOOK_NOT_FOUND');
    given([]).when(command({ subscription: null })).thenThrows('CONNECT_WEBHOOK_NOT_FOUND');
    given([]).when(command({ subscription: { ...subscription, active: false } })).thenThrows('CONNECT_WEBHOOK_PAUSED');
    given([]).when(command({ candidates: [] })).thenThrows('CONNECT_WEBHOOK_DELIVERY_NOT_FOUND');
    given([]).when(command({ candidates: [candidate(1, { eventType: 'webhook.test' })] })).thenThrows('CONNECT_WEBHOOK_NOT_REDELIVERABLE');
    given([]).when(command({ candidates: [candidate(1, { pending: true })] })).thenThrows('CONNECT_WEBHOOK_DELIVERY_PENDING');
    given([]).when(command({ candidates: [candidate(1, { occurredAt: '2026-04-30T09:59:59.000Z' })] })).thenThrows('CONNECT_WEBHOOK_REDELIVERY_WINDOW');
  });

  it('since an instant: every event in range, pending ones skipped, nothing appended when none is left, more than the bound refused', () => {
    const since = { kind: 'since' as const, since: '2026-05-08T00:00:00.000Z', until: now };
    given([])
      .when(command({ request: since, candidates: [candidate(1), candidate(2, { pending: true }), candidate(3)] }))
      .then((events) => {
        const d = events[0]!.data;
        expect(d.deliveries.map((x) => x.eventId)).to.deep.equal(['e_1', 'e_3']);
        expect(d.skipped).to.deep.equal([{ deliveryId: candidate(2).deliveryId, eventId: 'e_2', reason: 'pending' }]);
        expect(d.request).to.deep.equal({ deliveryId: null, since: since.since, until: now });
      });
    given([]).when(command({ request: since, candidates: [candidate(2, { pending: true })] })).thenNothingHappened();
    const many = Array.from({ length: REDELIVERY_LIMITS.maxEvents + 1 }, (_, i) => candidate(i));
    given([]).when(command({ request: since, candidates: many })).thenThrows('CONNECT_VALIDATION_ERROR');
  });

  it('parses a request, naming the field of every refusal', () => {
    const at = new Date(now);
    expect(parseRedeliveryBody({ deliveryId: candidate(1).deliveryId }, at)).to.deep.equal({ kind: 'delivery', deliveryId: candidate(1).deliveryId });
    expect(parseRedeliveryBody({ since: '2026-05-08T09:00:00+02:00' }, at)).to.deep.equal({ kind: 'since', since: '2026-05-08T07:00:00.000Z', until: now });
    // An until in the future is now.
    expect(parseRedeliveryBody({ since: '2026-05-08T09:00:00Z', until: '2026-06-01T00:00:00Z' }, at)).to.deep.include({ until: now });
    const cases: [unknown, string[]][] = [
      [[], []],
      [{}, []],
      [{ foo: 1 }, ['foo']],
      [{ deliveryId: 'nope' }, ['deliveryId']],
      [{ deliveryId: candidate(1).deliveryId, since: now }, ['since']],
      [{ deliveryId: candidate(1).deliveryId, until: now }, ['until']],
      [{ since: 'yesterday' }, ['since']],
      [{ since: '2026-05-08' }, ['since']],
      [{ since: '2026-05-01T09:59:59Z' }, ['since']],
      [{ since: '2026-05-08T10:00:01Z' }, ['since']],
      [{ since: '2026-05-08T09:00:00Z', until: '2026-05-08T08:00:00Z' }, ['until']],
      [{ since: '2026-05-08T09:00:00Z', until: 5 }, ['until']],
    ];
    for (const [body, path] of cases) {
      const e = refusal(() => parseRedeliveryBody(body, at));
      expect([e.code, e.path], JSON.stringify(body)).to.deep.equal(['CONNECT_VALIDATION_ERROR', path]);
    }
    // The oldest instant allowed is exactly the window.
    expect(parseRedeliveryBody({ since: '2026-05-01T10:00:00Z' }, at).kind).to.equal('since');
  });
});
