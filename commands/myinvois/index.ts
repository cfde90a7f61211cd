/**
 * The MyInvois production connector, assembled from the configuration (MYINVOIS_*): null when
 * MyInvois is not configured, and then production MY documents wait in delivery_failed with
 * DESTINATION_NOT_CONFIGURED as before. The sandbox keeps its simulator either way.
 */
import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import { withProductionConnector, type ConnectorRegistry } from '../delivery/connector.js';
import { MyInvoisClient, type MyInvoisClientOptions } from './client.js';
import { MyInvoisConnector } from './connector.js';
import { MyInvoisCredentials } from './credentials.js';

export function createMyInvoisConnector(
  deps: { config: Config; knex: Knex; clock: Clock },
  overrides: Pick<MyInvoisClientOptions, 'maxWaitMs' | 'rateLimits'> = {},
): MyInvoisConnector | null {
  const config = deps.config.myinvois;
  if (!config) return null;
  const client = new MyInvoisClient({ config, knex: deps.knex, ...overrides });
  return new MyInvoisConnector({ config, client, credentials: new MyInvoisCredentials(deps.knex, config.credentialsKey), clock: deps.clock });
}

/** `base` with production MY documents going to MyInvois when the connector is configured. */
export function withMyInvois(base: ConnectorRegistry, connector: MyInvoisConnector | null): ConnectorRegistry {
  return connector ? withProductionConnector(base, connector) : base;
}
