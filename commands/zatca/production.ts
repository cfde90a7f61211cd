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
import { secretBox, type SecretBox } from '../webhooks/secrets.js';
import { ZatcaApiClient } from './api/client.js';
import { ZatcaConnector } from './connector.js';
import { sellerProductionCsid } from './onboarding.js';

/** The box that seals EGS units' private keys and CSID secrets (WEBHOOK_SECRET_ENCRYPTION_KEY). */
export const zatcaSecrets = (config: Config): SecretBox => secretBox(config.webhooks.secretEncryptionKey);

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

const sellerVatOf = (request: DeliveryRequest): string | null => {
  const v = (request.coreDocument as { parties?: { seller?: { taxIds?: { value?: unknown }[] } } } | null)?.parties?.seller?.taxIds?.[0]?.value;
  return typeof v === 'string' && v !== '' ? v : null;
};

export function createZatcaConnector(deps: { config: Config; store: EventStore; clock: Clock }): ZatcaConnector | null {
  const zatca = deps.config.zatca;
  if (!zatca) return null;
  const secrets = zatcaSecrets(deps.config);
  return new ZatcaConnector({
    client: zatcaClient(zatca, zatca.environment),
    clock: deps.clock,
    zatcaEnvironment: zatca.environment,
    credentials: async (request) => {
      const sellerVat = sellerVatOf(request);
      if (!request.workspaceId || !sellerVat) return null;
      return sellerProductionCsid({ store: deps.store, secrets }, { workspaceId: request.workspaceId, environment: zatca.environment, sellerVat });
    },
  });
}

/** `base` with production Saudi documents going to ZATCA when it is configured. */
export function withZatca(base: ConnectorRegistry, connector: ZatcaConnector | null): ConnectorRegistry {
  return connector ? withProductionConnector(base, connector) : base;
}
