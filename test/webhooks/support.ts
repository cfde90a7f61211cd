/** Helpers of the webhook tests: a real HTTP receiver on an ephemeral port, and a driven delivery worker. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { ManualClock } from '../../platform/clock.js';
import type { WebhookWorker } from '../../projections/reactors/webhook-delivery.js';
import { call, type TestService } from '../support/http.js';

export const WEBHOOKS = '/v3/connect/webhooks';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: any;
  at: string;
}

/** What the receiver answers: a status, or 'hang' (never answers), or a delay before the status. */
export type Answer = number | 'hang' | { status: number; delayMs: number; body?: string };

export interface Receiver {
  url: string;
  /** A fresh path with its own script of answers (the last one repeats). */
  route(answers?: Answer[]): { url: string; received: Received[] };
  close(): Promise<void>;
}

export async function startReceiver(clock: ManualClock): Promise<Receiver> {
  const routes = new Map<string, { answers: Answer[]; received: Received[] }>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const route = routes.get(req.url ?? '');
      if (!route) {
        res.statusCode = 404;
        res.end();
        return;
      }
      const raw = Buffer.concat(chunks);
      let body: unknown = null;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = raw.toString('utf8');
      }
      route.received.push({ path: req.url!, headers: req.headers, raw, body, at: clock.now().toISOString() });
      const answer = route.answers.length > 1 ? route.answers.shift()! : route.answers[0]!;
      if (answer === 'hang') return; // never answers
      const status = typeof answer === 'number' ? answer : answer.status;
      const send = () => {
        res.statusCode = status;
        res.end(typeof answer === 'object' && answer.body !== undefined ? answer.body : '{"ok":true}');
      };
      if (typeof answer === 'object') setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    route(answers = [200]) {
      const path = `/hook/${randomUUID()}`;
      const r = { answers: [...answers], received: [] as Received[] };
      routes.set(path, r);
      return { url: `${url}${path}`, received: r.received };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function webhookWorker(t: TestService): WebhookWorker {
  return t.service.processes.workers.map((w) => w.worker).find((w) => w.name === 'webhook_delivery') as WebhookWorker;
}

/** Sets the clock, ticks the worker, waits for its sends and for the read models to apply what they recorded. */
export async function drive(t: TestService, clock: ManualClock, at: number | string, worker = webhookWorker(t)): Promise<void> {
  clock.set(typeof at === 'number' ? new Date(at) : at);
  await t.settleAll();
  await worker.tick(clock.now());
  await worker.idle();
  await t.settleAll();
}

export function webhooksClient(t: TestService, apiKey: string) {
  const base = { 'x-api-key': apiKey };
  return {
    /** environment '' sends no X-Environment (production). */
    create: (body: unknown, environment = 'sandbox', headers: Record<string, string> = {}) =>
      call(`${t.url}${WEBHOOKS}`, { method: 'POST', headers: { ...base, ...(environment === '' ? {} : { 'x-environment': environment }), ...headers }, body }),
    list: (query = '') => call(`${t.url}${WEBHOOKS}${query}`, { headers: base }),
    get: (id: string, suffix = '') => call(`${t.url}${WEBHOOKS}/${id}${suffix}`, { headers: base }),
    patch: (id: string, body: unknown) => call(`${t.url}${WEBHOOKS}/${id}`, { method: 'PATCH', headers: base, body }),
    remove: (id: string) => call(`${t.url}${WEBHOOKS}/${id}`, { method: 'DELETE', headers: base }),
    test: (id: string) => call(`${t.url}${WEBHOOKS}/${id}/test`, { method: 'POST', headers: base }),
  };
}

export async function subscribe(client: ReturnType<typeof webhooksClient>, body: Record<string, unknown>, environment = 'sandbox'): Promise<string> {
  const r = await client.create(body, environment);
  expect(r.status, r.text).to.equal(201);
  return r.json.data.id as string;
}

/**
 * Stores an active subscription straight into the read model, without the webhooks projection
 * seeing its event (as another instance's batch would); its id is `sub_<workspace>_behind`.
 */
export async function storeSubscriptionBehind(t: TestService, workspaceId: string, webhookUrl: string, events: string[], at: string): Promise<string> {
  const subscriptionId = `sub_${workspaceId}_behind`;
  await t.service.deps.knex('webhook_subscriptions').insert({
    subscription_id: subscriptionId,
    workspace_id: workspaceId,
    environment: 'sandbox',
    webhook_url: webhookUrl,
    events,
    secret_key: null,
    signature_algorithm: 'HMAC-SHA256',
    description: null,
    active: true,
    deleted: false,
    created_at: at,
    updated_at: at,
  });
  return subscriptionId;
}
