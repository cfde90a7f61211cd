/**
 * ZATCA in production, assembled from the configuration (ZATCA_* variables): the API client of
 * the configured ZATCA environment, and the connector that clears and reports the service's
 * production Saudi documents under the production CSID of their seller's EGS unit. Null when
 * ZATCA_ENVIRONMENT is unset: production Saudi documents then wait in delivery_failed with
 * DESTINATION_NOT_CONFIGURED, and /readyz lists ZATCA as missing. The sandbox environment keeps
 * its simulator either way.
 */
import type { Config, ZatcaConfig, ZatcaEnvironmentName } from '../../platform/config.js';
import { ZATCA_PUBLISHED_BASE_URLS } from '../../platform/config.js';
import type { Clock } from '../../platform/clock.js';
import type { EventStore } from '../../platform/eventstore/port.js';
import { withProductionConnector, type ConnectorRegistry, type DeliveryRequest } from '../delivery/connector.js';
import { ZatcaApiClient } from './api/client.js';
import { ZatcaConnector } from './connector.js';
import { egsSecretBox } from './egs-units.js';
import { unitProductionCsid } from './onboarding.js';

/**
 * The client of one of ZATCA's environments: the configured base URL for the configured
 * environment (ZATCA_BASE_URL may point elsewhere, e.g. a proxy), ZATCA's published one for another.
 */
export function zatcaClient(zatca: ZatcaConfig | null, environment: ZatcaEnvironmentName): ZatcaApiClient {
  const baseUrl = zatca && zatca.environment === environment ? zatca.baseUrl : ZATCA_PUBLISHED_BASE_URLS[environment];
  return new ZatcaApiClient({
    baseUrl,
    timeoutMs: zatca?.timeoutMs ?? 30_000,
    maxAttempts: zatca?.maxAttempts ?? 3,
    retryBaseMs: zatca?.retryBaseMs ?? 1000,
    maxRetryAfterMs: zatca?.maxRetryAfterMs ?? 30_000,
  });
}

export function createZatcaConnector(deps: { config: Config; store: EventStore; clock: Clock }): ZatcaConnector | null {
  const zatca = deps.config.zatca;
  if (!zatca) return null;
  const secrets = egsSecretBox(deps.config);
  return new ZatcaConnector({
    client: zatcaClient(zatca, zatca.environment),
    clock: deps.clock,
    zatcaEnvironment: zatca.environment,
    // The production CSID of the EGS unit that stamped the document (none: the seller has no unit in production).
    credentials: async (request: DeliveryRequest) => (request.zatcaEgsUnitId ? unitProductionCsid({ store: deps.store, secrets }, request.zatcaEgsUnitId) : null),
  });
}

/** `base` with production Saudi documents going to ZATCA when it is configured. */
export function withZatca(base: ConnectorRegistry, connector: ZatcaConnector | null): ConnectorRegistry {
  return connector ? withProductionConnector(base, connector) : base;
}
