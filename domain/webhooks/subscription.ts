/**
 * A webhook subscription (docs/api/webhooks.md: per workspace, per event type and per data environment),
 * as an aggregate in its own stream `webhooksub-<subscriptionId>`: created, updated (URL,
 * events, secret rotation, algorithm, description, active) and deleted, each an event, so a
 * workspace's subscription history is auditable. The secret is in the events (deliveries are
 * signed with it after a rebuild too) and nowhere in any answer. Pure.
 */
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { defineEvent } from '../events/envelope.js';
import { oneOf } from '../connect/values.js';
import { SIGNATURE_ALGORITHMS, WEBHOOK_ENVIRONMENTS, WebhookErrorCodes, type SignatureAlgorithm, type WebhookEnvironment, type WebhookEventType } from './values.js';

const nullableString = t.union([t.string, t.null]);

const SubscriptionFields = t.type({
  subscriptionId: t.string,
  workspaceId: t.string,
  environment: oneOf(WEBHOOK_ENVIRONMENTS, 'WebhookEnvironment'),
  webhookUrl: t.string,
  events: t.array(t.string),
  secretKey: nullableString,
  signatureAlgorithm: oneOf(SIGNATURE_ALGORITHMS, 'SignatureAlgorithm'),
  description: nullableString,
  active: t.boolean,
});

export const WebhookSubscriptionCreated = defineEvent({
  type: 'WebhookSubscriptionCreated',
  version: 1,
  codec: t.intersection([SubscriptionFields, t.type({ createdAt: t.string })]),
});

/** The subscription as it is after the update, and which fields changed. */
export const WebhookSubscriptionUpdated = defineEvent({
  type: 'WebhookSubscriptionUpdated',
  version: 1,
  codec: t.intersection([SubscriptionFields, t.type({ changed: t.array(t.string), updatedAt: t.string })]),
});

export const WebhookSubscriptionDeleted = defineEvent({
  type: 'WebhookSubscriptionDeleted',
  version: 1,
  codec: t.type({ subscriptionId: t.string, workspaceId: t.string, deletedAt: t.string }),
});

export type SubscriptionEvent =
  | DomainEvent<'WebhookSubscriptionCreated', t.TypeOf<typeof WebhookSubscriptionCreated.codec>>
  | DomainEvent<'WebhookSubscriptionUpdated', t.TypeOf<typeof WebhookSubscriptionUpdated.codec>>
  | DomainEvent<'WebhookSubscriptionDeleted', t.TypeOf<typeof WebhookSubscriptionDeleted.codec>>;

export interface Subscription {
  subscriptionId: string;
  workspaceId: string;
  environment: WebhookEnvironment;
  webhookUrl: string;
  events: WebhookEventType[];
  secretKey: string | null;
  signatureAlgorithm: SignatureAlgorithm;
  description: string | null;
  active: boolean;
  createdAt: string;
  updatedAt: string;
  deleted: boolean;
}

export interface SubscriptionState {
  subscription: Subscription | null;
}

export interface SubscriptionChanges {
  webhookUrl?: string;
  events?: WebhookEventType[];
  /** null removes the secret (deliveries are then unsigned). */
  secretKey?: string | null;
  signatureAlgorithm?: SignatureAlgorithm;
  description?: string | null;
  active?: boolean;
}

export type SubscriptionCommand =
  | {
      type: 'CreateSubscription';
      subscriptionId: string;
      workspaceId: string;
      environment: WebhookEnvironment;
      webhookUrl: string;
      events: WebhookEventType[];
      secretKey: string | null;
      signatureAlgorithm: SignatureAlgorithm;
      description: string | null;
      now: string;
    }
  | { type: 'UpdateSubscription'; workspaceId: string; changes: SubscriptionChanges; now: string }
  | { type: 'DeleteSubscription'; workspaceId: string; now: string };

const notFound = (): never => {
  throw new DomainError('not_found', WebhookErrorCodes.notFound, 'no webhook subscription with that id in the workspace', ['path', 'id']);
};

function live(state: SubscriptionState, workspaceId: string): Subscription {
  const s = state.subscription;
  if (!s || s.deleted || s.workspaceId !== workspaceId) return notFound();
  return s;
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

export function decideSubscription(command: SubscriptionCommand, state: SubscriptionState): SubscriptionEvent[] {
  switch (command.type) {
    case 'CreateSubscription': {
      if (state.subscription) throw new DomainError('conflict', 'CONNECT_WEBHOOK_EXISTS', 'the subscription exists already');
      const { type: _type, now, ...fields } = command;
      return [{ type: 'WebhookSubscriptionCreated', data: { ...fields, active: true, createdAt: now } }];
    }
    case 'UpdateSubscription': {
      const s = live(state, command.workspaceId);
      const c = command.changes;
      const next = {
        webhookUrl: c.webhookUrl ?? s.webhookUrl,
        events: c.events ?? s.events,
        secretKey: c.secretKey !== undefined ? c.secretKey : s.secretKey,
        signatureAlgorithm: c.signatureAlgorithm ?? s.signatureAlgorithm,
        description: c.description !== undefined ? c.description : s.description,
        active: c.active ?? s.active,
      };
      const changed: string[] = [];
      if (next.webhookUrl !== s.webhookUrl) changed.push('webhookUrl');
      if (!sameList(next.events, s.events)) changed.push('events');
      // A secret given again is a rotation even when it is the same text: the secret is never compared or shown.
      if (c.secretKey !== undefined) changed.push('secretKey');
      if (next.signatureAlgorithm !== s.signatureAlgorithm) changed.push('signatureAlgorithm');
      if (next.description !== s.description) changed.push('description');
      if (next.active !== s.active) changed.push('active');
      if (changed.length === 0) return [];
      return [
        {
          type: 'WebhookSubscriptionUpdated',
          data: { subscriptionId: s.subscriptionId, workspaceId: s.workspaceId, environment: s.environment, ...next, changed, updatedAt: command.now },
        },
      ];
    }
    case 'DeleteSubscription': {
      const s = live(state, command.workspaceId);
      return [{ type: 'WebhookSubscriptionDeleted', data: { subscriptionId: s.subscriptionId, workspaceId: s.workspaceId, deletedAt: command.now } }];
    }
  }
}

export function evolveSubscription(state: SubscriptionState, event: SubscriptionEvent): SubscriptionState {
  switch (event.type) {
    case 'WebhookSubscriptionCreated': {
      const d = event.data;
      return { subscription: { ...d, events: d.events as WebhookEventType[], updatedAt: d.createdAt, deleted: false } };
    }
    case 'WebhookSubscriptionUpdated': {
      const s = state.subscription;
      if (!s) return state;
      const { changed: _changed, updatedAt, ...d } = event.data;
      return { subscription: { ...s, ...d, events: d.events as WebhookEventType[], updatedAt } };
    }
    case 'WebhookSubscriptionDeleted':
      return state.subscription ? { subscription: { ...state.subscription, deleted: true, updatedAt: event.data.deletedAt } } : state;
  }
}

export const subscriptionDecider: Decider<SubscriptionCommand, SubscriptionState, SubscriptionEvent> = {
  category: 'webhooksub',
  initialState: { subscription: null },
  events: { WebhookSubscriptionCreated, WebhookSubscriptionUpdated, WebhookSubscriptionDeleted },
  decide: decideSubscription,
  evolve: evolveSubscription,
};

registerDecider(subscriptionDecider);
