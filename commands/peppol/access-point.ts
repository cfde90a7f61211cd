/**
 * The service's own Peppol access point, assembled from the configuration: its identity and trust
 * (platform/peppol-pki.ts), SML/SMP discovery, the delivery connector for production PEPPOL
 * documents (corner 2, and corner 5 for AE), and what the AS4 endpoint needs to receive (corner 3).
 * Null when the access point is not fully configured; the sandbox is never routed through it.
 */
import type { Knex } from 'knex';
import type { Config } from '../../platform/config.js';
import type { Clock } from '../../platform/clock.js';
import type { EventStore, Position } from '../../platform/eventstore/port.js';
import { openPeppolAccessPoint, type AccessPointIdentity, type PeppolAccessPoint, type PeppolTrust } from '../../platform/peppol-pki.js';
import { withProductionConnector, type Connector, type ConnectorRegistry } from '../delivery/connector.js';
import type { ReceiveDeps } from './as4/receive.js';
import { PeppolConnector } from './connector.js';
import { createPeppolDiscovery, type PeppolDiscovery } from './discovery/index.js';
import { as4Acceptor } from './inbound.js';
import type { ResponseTransport } from '../purchases/respond.js';

/** The environment the access point serves: Peppol is a production network; the sandbox has its own in-process one. */
export const ACCESS_POINT_ENVIRONMENT = 'production';
/** How long one AS4 exchange may take before it counts as a time-out (outcome unknown; retried with the same message id). */
export const AS4_SEND_TIMEOUT_MS = 60_000;

export interface AccessPoint {
  identity: AccessPointIdentity;
  trust: PeppolTrust;
  connector: Connector;
  /** SML/SMP discovery (also behind participant lookup). */
  discovery: PeppolDiscovery;
  /** Sends a buyer's Invoice Response to the seller's access point (purchases received over AS4). */
  responses: ResponseTransport;
  receive: ReceiveDeps;
  /** Largest AS4 HTTP body accepted. */
  maxBodyBytes: number;
}

export function createAccessPoint(
  deps: { config: Config; knex: Knex; store: EventStore; clock: Clock; onStored?: (positions: Position[]) => void },
  /** `peppol`: the identity and trust loaded at start (loaded here when not given). */
  overrides: { discovery?: PeppolDiscovery; peppol?: PeppolAccessPoint | null } = {},
): AccessPoint | null {
  const now = () => deps.clock.now();
  const opened = overrides.peppol !== undefined ? overrides.peppol : openPeppolAccessPoint(deps.config.peppol, now()).accessPoint;
  if (!opened) return null;
  const { identity, trust, config: peppol } = opened;
  const discovery = overrides.discovery ?? createPeppolDiscovery({ smlZone: peppol.smlZone, dnsServers: peppol.dnsServers ?? undefined, trust, now });
  const maxXmlBytes = deps.config.purchases.maxXmlBytes;
  const connector = new PeppolConnector({
    identity,
    trust,
    clock: deps.clock,
    discovery,
    timeoutMs: AS4_SEND_TIMEOUT_MS,
    maxResponseBytes: 1024 * 1024,
    corner5Participant: peppol.corner5Participant,
    buyerResponseWindowMs: deps.config.delivery.peppolBuyerResponseWindowMs,
  });
  const responses: ResponseTransport = {
    send: ({ xml, environment, responseId, countryC1 }) => connector.sendInvoiceResponse({ xml: xml.toString('utf8'), responseId, environment, countryC1 }),
  };
  return {
    identity,
    trust,
    connector,
    discovery,
    responses,
    // The SBDH around the largest accepted document, compressed: never more than the document plus its envelope.
    maxBodyBytes: maxXmlBytes + 256 * 1024,
    receive: {
      identity,
      trust,
      now,
      maxPayloadBytes: maxXmlBytes + 64 * 1024,
      maxXmlBytes,
      accept: as4Acceptor({ store: deps.store, knex: deps.knex, clock: deps.clock, environment: ACCESS_POINT_ENVIRONMENT, maxXmlBytes, onStored: deps.onStored }),
    },
  };
}

/** The sandbox connectors, with production PEPPOL documents going through the access point. */
export function withAccessPoint(sandbox: ConnectorRegistry, accessPoint: AccessPoint | null): ConnectorRegistry {
  return accessPoint ? withProductionConnector(sandbox, accessPoint.connector) : sandbox;
}
