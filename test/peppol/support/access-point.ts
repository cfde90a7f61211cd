/** Helpers of the access point tests: a service configured as a Peppol access point, and a discovery table. */
import type { Config } from '../../../platform/config.js';
import type { PeppolDiscovery } from '../../../commands/peppol/discovery/index.js';
import { serviceProcesses } from '../../../projections/reactors/processes.js';
import type { Database } from '../../../platform/database.js';
import { startTestService, type TestService } from '../../support/http.js';
import type { TestParty, TestPki } from './pki.js';

export type DiscoveryEntry = { url: string; certificatePem: string; documentTypes?: string[] } | 'not_registered';

/** A discovery answering from a table (participant value → endpoint); the loopback SML/SMP is tested in discovery tests. */
export function tableDiscovery(table: Map<string, DiscoveryEntry>): PeppolDiscovery & { lookups: { participant: string; documentTypeId: string; processId: string }[] } {
  const lookups: { participant: string; documentTypeId: string; processId: string }[] = [];
  return {
    lookups,
    async lookup(participant, documentTypeId, processId) {
      lookups.push({ participant: participant.value, documentTypeId, processId });
      const entry = table.get(participant.value.toLowerCase());
      if (!entry || entry === 'not_registered') return { found: false, reason: 'PARTICIPANT_NOT_REGISTERED', detail: `participant ${participant.value} is not registered in the SML` };
      if (entry.documentTypes && !entry.documentTypes.includes(documentTypeId)) return { found: false, reason: 'DOCUMENT_TYPE_NOT_SUPPORTED', detail: `the SMP of ${participant.value} has no metadata for ${documentTypeId}` };
      return { found: true, endpoint: { url: entry.url, certificatePem: entry.certificatePem, transportProfile: 'peppol-transport-as4-v2_0' } };
    },
  };
}

export function accessPointConfig(pki: TestPki, party: TestParty, extra: Partial<Config['peppol']> = {}): (c: Config) => Config {
  return (c) => ({
    ...c,
    peppol: {
      keystore: { kind: 'pem', keyPath: party.keyPath, certificatePath: party.certPath },
      truststorePath: pki.caCertPath,
      smlZone: 'acc.edelivery.tech.ec.europa.eu',
      dnsServers: null,
      endpointUrl: 'https://ap.example.test/as4',
      revocationCheck: 'off',
      corner5Participant: null,
      receiveThreads: null,
      ...extra,
    },
  });
}

export function startAccessPoint(pki: TestPki, party: TestParty, discovery: PeppolDiscovery, options: { db?: Database; peppol?: Partial<Config['peppol']> } = {}): Promise<TestService> {
  return startTestService({
    config: accessPointConfig(pki, party, options.peppol),
    processes: (deps) => serviceProcesses(deps, { peppolDiscovery: discovery }),
    ...(options.db ? { db: options.db } : {}),
  });
}

/**
 * The environment of a `scripts/start.ts` process configured as an access point with `party`'s key
 * and certificate (PEM files), the test CA as trust store, and discovery through a loopback SML
 * (DNS) and SMP (test/peppol/fixtures/dns-smp.ts). Several processes given the same values are
 * one access point (e.g. behind a load balancer whose URL is `endpointUrl`).
 */
export function accessPointEnvironment(
  pki: TestPki,
  party: TestParty,
  options: { dnsServer: string; smlZone: string; endpointUrl: string; corner5Participant?: { scheme: string; value: string } },
): Record<string, string> {
  return {
    PEPPOL_KEY: party.keyPath,
    PEPPOL_CERTIFICATE: party.certPath,
    PEPPOL_TRUSTSTORE: pki.caCertPath,
    PEPPOL_SML_ZONE: options.smlZone,
    PEPPOL_DNS_SERVERS: options.dnsServer,
    PEPPOL_ENDPOINT_URL: options.endpointUrl,
    PEPPOL_REVOCATION_CHECK: 'off',
    ...(options.corner5Participant ? { PEPPOL_CORNER5_PARTICIPANT: `${options.corner5Participant.scheme}::${options.corner5Participant.value}` } : {}),
  };
}
