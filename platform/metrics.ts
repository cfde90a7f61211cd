/**
 * Prometheus metrics of this process (prom-client), served at GET /metrics. The one place
 * metrics are defined: other code calls the small `record…` functions below, so an
 * instrumentation point is one line. Names are listed in docs/api/http.md.
 */
import client from 'prom-client';

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

const httpDuration = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration by API family, route template, method and status',
  labelNames: ['family', 'route', 'method', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
  registers: [registry],
});
const httpRequests = new client.Counter({
  name: 'http_requests_total',
  help: 'HTTP requests by API family, route template, method and status',
  labelNames: ['family', 'route', 'method', 'status'] as const,
  registers: [registry],
});
const appendDuration = new client.Histogram({
  name: 'eventstore_append_duration_seconds',
  help: 'Event-store append latency (one append as its caller sees it, group-commit wait included)',
  labelNames: ['engine'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  registers: [registry],
});
const groupCommitBatch = new client.Histogram({
  name: 'eventstore_group_commit_batch_appends',
  help: 'Appends carried by one group-commit transaction',
  buckets: [1, 2, 4, 8, 16, 32, 64],
  registers: [registry],
});
const deliveryAttempts = new client.Counter({
  name: 'delivery_attempts_total',
  help: 'Delivery attempts to a destination by outcome (delivered, refused, failed, not_configured)',
  labelNames: ['destination', 'environment', 'outcome'] as const,
  registers: [registry],
});
const webhookAttempts = new client.Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Credit webhook delivery attempts by event type and outcome (success, retry, failed)',
  labelNames: ['event', 'outcome'] as const,
  registers: [registry],
});
const idempotencyReplays = new client.Counter({
  name: 'idempotency_replays_total',
  help: 'Requests answered from a stored response (same Idempotency-Key and payload)',
  labelNames: ['family'] as const,
  registers: [registry],
});
const idempotencyConflicts = new client.Counter({
  name: 'idempotency_conflicts_total',
  help: 'Requests refused because their Idempotency-Key was used with another payload',
  labelNames: ['family'] as const,
  registers: [registry],
});
const rateLimitRefusals = new client.Counter({
  name: 'rate_limit_refusals_total',
  help: 'Requests refused with 429 by the per-workspace rate limit',
  labelNames: ['family'] as const,
  registers: [registry],
});
const projectionLagEvents = new client.Gauge({
  name: 'projection_lag_events',
  help: 'Events in the global log after the projection\'s checkpoint (counted up to 10,000)',
  labelNames: ['projection'] as const,
  registers: [registry],
});
const projectionLagSeconds = new client.Gauge({
  name: 'projection_lag_seconds',
  help: 'Age of the oldest event the projection has not applied yet (0 when caught up)',
  labelNames: ['projection'] as const,
  registers: [registry],
});
const workerTicks = new client.Counter({
  name: 'worker_ticks_total',
  help: 'Worker ticks run by this instance (a tick another instance holds is skipped, outcome "elsewhere")',
  labelNames: ['worker', 'outcome'] as const,
  registers: [registry],
});

export function recordHttpRequest(labels: { family: string; route: string; method: string; status: number }, seconds: number): void {
  const l = { ...labels, status: String(labels.status) };
  httpDuration.observe(l, seconds);
  httpRequests.inc(l);
}

export function recordAppend(engine: string, seconds: number): void {
  appendDuration.observe({ engine }, seconds);
}

export function recordGroupCommitBatch(appends: number): void {
  groupCommitBatch.observe(appends);
}

export function recordDeliveryAttempt(destination: string, environment: string, outcome: 'delivered' | 'refused' | 'failed' | 'not_configured'): void {
  deliveryAttempts.inc({ destination, environment, outcome });
}

/** For the credit webhook worker: one call per delivery attempt. */
export function recordWebhookAttempt(event: string, outcome: 'success' | 'retry' | 'failed'): void {
  webhookAttempts.inc({ event, outcome });
}

export function recordIdempotencyReplay(family: string): void {
  idempotencyReplays.inc({ family });
}

export function recordIdempotencyConflict(family: string): void {
  idempotencyConflicts.inc({ family });
}

export function recordRateLimitRefusal(family: string): void {
  rateLimitRefusals.inc({ family });
}

export function recordWorkerTick(worker: string, outcome: 'ran' | 'elsewhere' | 'failed'): void {
  workerTicks.inc({ worker, outcome });
}

export interface ProjectionLag {
  projection: string;
  events: number;
  seconds: number;
}

let lagSource: (() => Promise<ProjectionLag[]>) | null = null;

/** The service registers how to measure projection lag; it is measured when /metrics is scraped. */
export function setProjectionLagSource(source: (() => Promise<ProjectionLag[]>) | null): void {
  lagSource = source;
}

export async function metricsText(): Promise<string> {
  if (lagSource) {
    const lags = await lagSource().catch(() => null);
    if (lags) {
      projectionLagEvents.reset();
      projectionLagSeconds.reset();
      for (const l of lags) {
        projectionLagEvents.set({ projection: l.projection }, l.events);
        projectionLagSeconds.set({ projection: l.projection }, l.seconds);
      }
    }
  }
  return registry.metrics();
}

export const metricsContentType = registry.contentType;
