/** Creating, changing and deleting webhook subscriptions (each an event of the subscription's stream). */
import { randomBytes } from 'node:crypto';
import { DomainError } from '../../domain/errors.js';
import type { SubscriptionInput } from '../../domain/webhooks/input.js';
import { subscriptionDecider, type Subscription, type SubscriptionChanges } from '../../domain/webhooks/subscription.js';
import { WebhookErrorCodes, webhookSubscriptionStream, type WebhookEnvironment } from '../../domain/webhooks/values.js';
import type { EventStore, Position } from '../../platform/eventstore/port.js';
import { execute, loadAggregate, type CommandContext } from '../execute.js';
import type { SecretBox } from './secrets.js';
import { targetProblem } from './sender.js';

export const newSubscriptionId = () => `whk_${randomBytes(12).toString('hex')}`;

export interface SubscriptionDeps {
  store: EventStore;
  allowPrivateTargets: boolean;
  /** Seals the signing secret before it enters the log. */
  secrets: SecretBox;
}

export interface SubscriptionResult {
  subscription: Subscription;
  position: Position | null;
}

async function checkTarget(deps: SubscriptionDeps, url: string, environment: WebhookEnvironment): Promise<void> {
  const problem = await targetProblem(url, environment, deps.allowPrivateTargets);
  if (problem) throw new DomainError('validation', WebhookErrorCodes.validation, problem, ['webhookUrl']);
}

export async function createSubscription(
  deps: SubscriptionDeps,
  input: SubscriptionInput & { workspaceId: string; environment: WebhookEnvironment },
  ctx: CommandContext,
): Promise<SubscriptionResult> {
  await checkTarget(deps, input.webhookUrl, input.environment);
  const subscriptionId = newSubscriptionId();
  const result = await execute(
    deps.store,
    subscriptionDecider,
    webhookSubscriptionStream(subscriptionId),
    {
      type: 'CreateSubscription',
      subscriptionId,
      ...input,
      secretKey: input.secretKey === null ? null : deps.secrets.seal(subscriptionId, input.secretKey),
      now: ctx.now.toISOString(),
    },
    ctx,
  );
  return { subscription: result.state.subscription!, position: result.appended?.position ?? null };
}

export async function updateSubscription(
  deps: SubscriptionDeps,
  workspaceId: string,
  subscriptionId: string,
  changes: SubscriptionChanges,
  ctx: CommandContext,
): Promise<SubscriptionResult> {
  const stream = webhookSubscriptionStream(subscriptionId);
  const loaded = await loadAggregate(deps.store, subscriptionDecider, stream);
  const current = loaded.state.subscription;
  if (changes.webhookUrl !== undefined && current && current.workspaceId === workspaceId) await checkTarget(deps, changes.webhookUrl, current.environment);
  const sealed: SubscriptionChanges =
    typeof changes.secretKey === 'string' ? { ...changes, secretKey: deps.secrets.seal(subscriptionId, changes.secretKey) } : changes;
  const result = await execute(
    deps.store,
    subscriptionDecider,
    stream,
    { type: 'UpdateSubscription', workspaceId, changes: sealed, now: ctx.now.toISOString() },
    { ...ctx, environment: current?.environment ?? null },
    { loaded },
  );
  return { subscription: result.state.subscription!, position: result.appended?.position ?? null };
}

export async function deleteSubscription(deps: SubscriptionDeps, workspaceId: string, subscriptionId: string, ctx: CommandContext): Promise<{ position: Position | null }> {
  const result = await execute(deps.store, subscriptionDecider, webhookSubscriptionStream(subscriptionId), { type: 'DeleteSubscription', workspaceId, now: ctx.now.toISOString() }, ctx);
  return { position: result.appended?.position ?? null };
}
