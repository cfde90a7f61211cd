/**
 * The reactors and workers of the service (see reactor.ts). Built with the service's
 * dependencies; the service runs reactors with the projection runner and ticks each worker
 * on its interval with the injected clock.
 */
import { secretBox } from '../../commands/webhooks/secrets.js';
import type { Knex } from 'knex';
import type { EventStore } from '../../platform/eventstore/port.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { PeppolAccessPoint } from '../../platform/peppol-pki.js';
import type { ConnectorRegistry } from '../../commands/delivery/connector.js';
import type { DeliveryDeps } from '../../commands/delivery/deliver.js';
import { egsSecretBox } from '../../commands/zatca/egs-units.js';
import { sandboxConnectors } from '../../commands/delivery/sandbox-connectors.js';
import { sandboxPeppolNetwork } from '../../commands/purchases/sandbox-network.js';
import { createAccessPoint, withAccessPoint, type AccessPoint } from '../../commands/peppol/access-point.js';
import type { PeppolDiscovery } from '../../commands/peppol/discovery/index.js';
import { createMyInvoisConnector, withMyInvois } from '../../commands/myinvois/index.js';
import { createZatcaConnector, withZatca } from '../../commands/zatca/production.js';
import { creditProcesses } from './credits-processes.js';
import { deliveryReactor, deliveryWorker } from './delivery.js';
import type { Reactor, Worker } from './reactor.js';
import { webhookDeliveryWorker } from './webhook-delivery.js';

export interface ProcessDeps {
  config: Config;
  knex: Knex;
  store: EventStore;
  clock: Clock;
  log: (msg: string, fields?: Record<string, unknown>) => void;
  /** The service's Peppol access point when fully configured (keystore, trust store, SML zone, endpoint URL). */
  peppol?: PeppolAccessPoint | null;
}

export interface Processes {
  reactors: Reactor[];
  workers: { worker: Worker; intervalMs: number }[];
  /** Destinations without a connector (reported by /readyz). */
  connectors: ConnectorRegistry;
  /** The service's own Peppol access point, when configured (its AS4 endpoint receives through it). */
  accessPoint?: AccessPoint | null;
}

/** `peppolDiscovery`: another SML/SMP lookup than the configured one (tests and benchmarks on loopback). */
export function serviceProcesses(deps: ProcessDeps, options: { peppolDiscovery?: PeppolDiscovery } = {}): Processes {
  const d = deps.config.delivery;
  const network = sandboxPeppolNetwork({ store: deps.store, knex: deps.knex, clock: deps.clock, maxXmlBytes: deps.config.purchases.maxXmlBytes });
  // Production PEPPOL documents leave through the access point when it is configured; the sandbox is unchanged.
  const accessPoint = createAccessPoint({ config: deps.config, knex: deps.knex, store: deps.store, clock: deps.clock }, { discovery: options.peppolDiscovery, peppol: deps.peppol });
  // Production MY documents go to MyInvois when MYINVOIS_* is configured, SA documents to ZATCA's API when ZATCA_ENVIRONMENT is set.
  const myinvois = createMyInvoisConnector({ config: deps.config, knex: deps.knex, clock: deps.clock });
  const zatca = createZatcaConnector({ config: deps.config, store: deps.store, clock: deps.clock });
  const connectors = withZatca(
    withMyInvois(
      withAccessPoint(sandboxConnectors(deps.knex, deps.clock, { latencyMs: d.sandboxLatencyMs, finalResultAfterMs: d.sandboxFinalResultAfterMs }, network), accessPoint),
      myinvois,
    ),
    zatca,
  );
  const delivery: DeliveryDeps = {
    store: deps.store,
    clock: deps.clock,
    connectors,
    policy: { maxAttempts: d.maxAttempts, retryBaseMs: d.retryBaseMs, retryMaxMs: d.retryMaxMs, startGraceMs: d.startGraceMs },
    zatca: {
      secrets: egsSecretBox(deps.config),
      // Production documents are stamped by the units onboarded in the ZATCA environment they go to.
      unitEnvironment: (environment) => (environment === 'production' && deps.config.zatca ? deps.config.zatca.environment : environment),
    },
  };
  const credits = creditProcesses(deps);
  const w = deps.config.webhooks;
  const webhooks = webhookDeliveryWorker(
    { store: deps.store, clock: deps.clock, knex: deps.knex, sender: { allowPrivateTargets: w.allowPrivateTargets, timeoutMs: w.timeoutMs }, secrets: secretBox(w.secretEncryptionKey) },
    { perSubscription: w.perSubscriptionConcurrency, total: w.concurrency, log: deps.log },
  );
  return {
    reactors: [deliveryReactor(delivery, d.concurrency), ...credits.reactors],
    workers: [
      { worker: deliveryWorker(delivery, deps.knex, { concurrency: d.concurrency, resumeAfterMs: d.resumeAfterMs }), intervalMs: d.workerIntervalMs },
      ...credits.workers,
      { worker: webhooks, intervalMs: w.workerIntervalMs },
    ],
    connectors,
    accessPoint,
  };
}
