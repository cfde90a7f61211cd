/**
 * Liveness and readiness. /healthz answers while the process is up. /readyz reports the
 * database, the event store and the projections (none failing for longer than the stall
 * threshold), the connectors present and missing per environment, and whether the Peppol
 * access point is configured, from a probe that runs in the background so the endpoint itself
 * is cheap.
 */
import type { Knex } from 'knex';
import type { EventStore } from '../platform/eventstore/port.js';
import type { ConnectorRegistry } from '../commands/delivery/connector.js';
import type { ProjectionRunner } from '../projections/runner.js';
import { pingDatabase } from '../readmodels/ping.js';

export interface Readiness {
  ready: boolean;
  checkedAt: string;
  checks: {
    database: 'ok' | string;
    eventStore: 'ok' | string;
    projections: { name: string; status: 'ok' | 'failing' | 'stalled'; error: string | null }[];
    connectors: {
      /** Destinations that have no connector in an environment: documents sent there wait in delivery_failed. */
      missing: { environment: string; destination: string }[];
      /** Connectors in place, by environment and destination. */
      present: { environment: string; destination: string; connector: string }[];
      /** The service's own Peppol access point: "configured", or which settings it still needs. */
      peppolAccessPoint: string;
    };
  };
}

export class ReadinessProbe {
  private current: Readiness = {
    ready: false,
    checkedAt: new Date(0).toISOString(),
    checks: { database: 'not checked yet', eventStore: 'not checked yet', projections: [], connectors: { missing: [], present: [], peppolAccessPoint: 'not checked yet' } },
  };
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly knex: Knex,
    private readonly store: EventStore,
    private readonly runner: ProjectionRunner,
    private readonly stalledAfterMs: number,
    private readonly connectors: ConnectorRegistry | null = null,
    /** Settings the Peppol access point still needs (empty: configured). */
    private readonly peppolMissing: string[] = ['PEPPOL_KEYSTORE (or PEPPOL_KEY and PEPPOL_CERTIFICATE)', 'PEPPOL_TRUSTSTORE', 'PEPPOL_SML_ZONE', 'PEPPOL_ENDPOINT_URL'],
  ) {}

  get state(): Readiness {
    return this.current;
  }

  async check(): Promise<Readiness> {
    const failed = (err: unknown) => (err instanceof Error ? err.message : String(err)) || 'unreachable';
    const database = await pingDatabase(this.knex).then(() => 'ok', failed);
    const eventStore = await this.store.ping().then(() => 'ok', failed);
    const now = Date.now();
    const projections = this.runner.statuses().map((s) => ({
      name: s.name,
      status: !s.failingSince ? ('ok' as const) : now - s.failingSince.getTime() > this.stalledAfterMs ? ('stalled' as const) : ('failing' as const),
      error: s.lastError,
    }));
    this.current = {
      ready: database === 'ok' && eventStore === 'ok' && projections.every((p) => p.status !== 'stalled'),
      checkedAt: new Date().toISOString(),
      checks: {
        database,
        eventStore,
        projections,
        connectors: {
          missing: this.connectors?.missing() ?? [],
          present: this.connectors?.present?.() ?? [],
          peppolAccessPoint: this.peppolMissing.length === 0 ? 'configured' : `not configured: set ${this.peppolMissing.join(', ')}`,
        },
      },
    };
    return this.current;
  }

  start(intervalMs = 1000): void {
    const tick = () => {
      void this.check().finally(() => {
        if (this.timer) this.timer = setTimeout(tick, intervalMs);
      });
    };
    this.timer = setTimeout(tick, intervalMs);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
