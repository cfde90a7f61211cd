/**
 * Configuration from environment variables. Every variable, its default and its meaning
 * is listed in docs/operations/configuration.md; this is the only place that reads process.env for settings.
 */
import net from 'node:net';
import path from 'node:path';

export interface Config {
  /** postgres://… of an external server; when unset an embedded PostgreSQL is started. */
  databaseUrl: string | null;
  embeddedPg: { dataDir: string; port: number; database: string };
  /** esdb://… or kurrentdb://… selects EventStoreDB for the event log; unset uses PostgreSQL. */
  eventStoreUrl: string | null;
  http: { host: string; port: number; bodyLimitBytes: number };
  logLevel: string;
  /** Pool size of the pg connection pool used by read models and the PostgreSQL event store. */
  dbPoolSize: number;
  projections: { batchSize: number; batchBytes: number; waitTimeoutMs: number; stalledAfterMs: number; ownership: 'gather' | 'off' };
  /** Connect requests per second per workspace (token bucket; 0 disables) and burst size. */
  connectRateLimit: { perSecond: number; burst: number };
  /** Participant lookup (docs/api/participant-lookup.md): its own limit per workspace, discovery being costly. */
  participantLookupRateLimit: { perSecond: number; burst: number };
  /** Dry runs of Unify submissions (POST /api/v3/unify/dry-run) per workspace and minute (0 disables). */
  dryRunRateLimit: { perMinute: number };
  /** Back-pressure (http/write-limit.ts): write requests executing at once (0: no limit), waiting at most, longest wait. */
  writeLimit: { concurrency: number; queueLength: number; queueTimeoutMs: number };
  /** Where the invoice query finds documents (readmodels/search). */
  search: {
    engine: 'postgres' | 'elasticsearch';
    /** http(s)://… of the Elasticsearch node or cluster (required with engine elasticsearch). */
    elasticsearchUrl: string | null;
    /** Prefix of the index and alias names, so several deployments can share a cluster. */
    elasticsearchIndexPrefix: string;
  };
  delivery: {
    maxAttempts: number;
    retryBaseMs: number;
    retryMaxMs: number;
    /** How long a destination may work before the attempt's start is recorded on its own. */
    startGraceMs: number;
    concurrency: number;
    workerIntervalMs: number;
    /**
     * How long an attempt may stay `processing` before the worker takes it for interrupted (the
     * service stopped between sending and recording the answer) and sends it again under the same
     * attempt: longer than any destination's exchange may take.
     */
    resumeAfterMs: number;
    /** Simulated time a sandbox destination takes per delivery, and until a Peppol final result. */
    sandboxLatencyMs: number;
    sandboxFinalResultAfterMs: number;
    /** Production Peppol: how long a delivered document awaits the buyer's answer before final_valid (0: final_valid at the receipt). */
    peppolBuyerResponseWindowMs: number;
  };
  /** Received purchase invoices: the largest XML accepted (sandbox Peppol network and UBL import). */
  purchases: { maxXmlBytes: number };
  webhooks: {
    /** Sandbox subscriptions may target private addresses (tests, local receivers); never production ones. */
    allowPrivateTargets: boolean;
    timeoutMs: number;
    concurrency: number;
    perSubscriptionConcurrency: number;
    workerIntervalMs: number;
    /** WEBHOOK_SECRET_ENCRYPTION_KEY (32 bytes): seals signing secrets at rest; null: the public development key. */
    secretEncryptionKey: Buffer | null;
  };
  /** The service's own Peppol access point (see docs/peppol-access-point.md); every field null when unset. */
  peppol: PeppolConfig;
  /** The MyInvois (Malaysia) production connector (see docs/operations/malaysia.md); null when not configured. */
  myinvois: MyInvoisConfig | null;
  /** ZATCA's API for production Saudi documents (see docs/operations/saudi-arabia.md); null when unset. */
  zatca: ZatcaConfig | null;
}

/** The published MyInvois systems: pre-production (LHDNM's sandbox) and production. */
export const MYINVOIS_SYSTEMS = {
  preprod: { apiBaseUrl: 'https://preprod-api.myinvois.hasil.gov.my', identityBaseUrl: 'https://preprod-api.myinvois.hasil.gov.my', portalBaseUrl: 'https://preprod.myinvois.hasil.gov.my' },
  production: { apiBaseUrl: 'https://api.myinvois.hasil.gov.my', identityBaseUrl: 'https://api.myinvois.hasil.gov.my', portalBaseUrl: 'https://myinvois.hasil.gov.my' },
} as const;

export interface MyInvoisConfig {
  /** Which MyInvois system the service's production documents go to. */
  system: keyof typeof MYINVOIS_SYSTEMS;
  /** The e-Invoice API, the identity service (token endpoint) and the portal (validation links). */
  apiBaseUrl: string;
  identityBaseUrl: string;
  portalBaseUrl: string;
  /** The service's own client credentials as an intermediary system (MYINVOIS_CLIENT_ID, MYINVOIS_CLIENT_SECRET); null without. */
  intermediary: { clientId: string; clientSecret: string } | null;
  /** MYINVOIS_CREDENTIALS_KEY (32 bytes): seals the taxpayers' client secrets and signing keys at rest. */
  credentialsKey: Buffer;
  /** One HTTP exchange longer than this is a time-out (outcome unknown). */
  requestTimeoutMs: number;
  /** How long the connector gathers documents into one submission. */
  batchWindowMs: number;
}

function urlSetting(name: string, value: string): string {
  let ok = false;
  try {
    const u = new URL(value);
    ok = (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password && !u.hash && !u.search;
  } catch {
    ok = false;
  }
  if (!ok) throw new ConfigError(`${name} must be an absolute http(s) URL without credentials, query or fragment, got "${value}"`);
  return value.replace(/\/+$/, '');
}

function keyFrom(name: string, raw: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError(`${name} must be 32 bytes, base64 (44 characters) or hex (64 digits)`);
  return key;
}

function myinvoisFrom(env: NodeJS.ProcessEnv): MyInvoisConfig | null {
  const system = env.MYINVOIS_SYSTEM || null;
  const urlsGiven = ['MYINVOIS_API_BASE_URL', 'MYINVOIS_IDENTITY_BASE_URL', 'MYINVOIS_PORTAL_BASE_URL', 'MYINVOIS_CLIENT_ID', 'MYINVOIS_CLIENT_SECRET', 'MYINVOIS_CREDENTIALS_KEY'].filter((n) => env[n]);
  if (!system) {
    if (urlsGiven.length > 0) throw new ConfigError(`${urlsGiven.join(', ')} ${urlsGiven.length === 1 ? 'is' : 'are'} set without MYINVOIS_SYSTEM (preprod or production)`);
    return null;
  }
  if (system !== 'preprod' && system !== 'production') throw new ConfigError(`MYINVOIS_SYSTEM must be preprod or production, got "${system}"`);
  if (!env.MYINVOIS_CREDENTIALS_KEY) throw new ConfigError('MYINVOIS_SYSTEM needs MYINVOIS_CREDENTIALS_KEY (32 bytes, base64 or hex): it seals the taxpayers\' credentials at rest');
  const clientId = env.MYINVOIS_CLIENT_ID || null;
  const clientSecret = env.MYINVOIS_CLIENT_SECRET || null;
  if (!!clientId !== !!clientSecret) throw new ConfigError('MYINVOIS_CLIENT_ID and MYINVOIS_CLIENT_SECRET go together (the intermediary system\'s client credentials)');
  const published = MYINVOIS_SYSTEMS[system];
  const intermediary = clientId && clientSecret ? { clientId, clientSecret } : null;
  // Serialized (a log line, an error report), the secret reads as redacted.
  if (intermediary) Object.defineProperty(intermediary, 'toJSON', { enumerable: false, value: () => ({ clientId, clientSecret: '[redacted]' }) });
  const credentialsKey = keyFrom('MYINVOIS_CREDENTIALS_KEY', env.MYINVOIS_CREDENTIALS_KEY);
  Object.defineProperty(credentialsKey, 'toJSON', { enumerable: false, value: () => '[redacted]' });
  return {
    system,
    apiBaseUrl: urlSetting('MYINVOIS_API_BASE_URL', env.MYINVOIS_API_BASE_URL || published.apiBaseUrl),
    identityBaseUrl: urlSetting('MYINVOIS_IDENTITY_BASE_URL', env.MYINVOIS_IDENTITY_BASE_URL || env.MYINVOIS_API_BASE_URL || published.identityBaseUrl),
    portalBaseUrl: urlSetting('MYINVOIS_PORTAL_BASE_URL', env.MYINVOIS_PORTAL_BASE_URL || published.portalBaseUrl),
    intermediary,
    credentialsKey,
    requestTimeoutMs: Math.max(100, intFrom('MYINVOIS_TIMEOUT_MS', 30_000, env)),
    batchWindowMs: intFrom('MYINVOIS_BATCH_WINDOW_MS', 200, env),
  };
}

/** ZATCA's environments: the developer portal (sandbox), simulation, production ("core"). */
export const ZATCA_ENVIRONMENTS = ['sandbox', 'simulation', 'production'] as const;
export type ZatcaEnvironmentName = (typeof ZATCA_ENVIRONMENTS)[number];

export interface ZatcaConfig {
  /** Which of ZATCA's environments the service's production documents go to. */
  environment: ZatcaEnvironmentName;
  /** The API's base URL: ZATCA's published one for the environment unless ZATCA_BASE_URL says otherwise. */
  baseUrl: string;
  timeoutMs: number;
  maxAttempts: number;
  retryBaseMs: number;
  maxRetryAfterMs: number;
}

/** ZATCA's published base URLs per environment. */
export const ZATCA_PUBLISHED_BASE_URLS: Readonly<Record<ZatcaEnvironmentName, string>> = {
  sandbox: 'https://gw-fatoora.zatca.gov.sa/e-invoicing/developer-portal',
  simulation: 'https://gw-fatoora.zatca.gov.sa/e-invoicing/simulation',
  production: 'https://gw-fatoora.zatca.gov.sa/e-invoicing/core',
};

function zatcaFrom(env: NodeJS.ProcessEnv): ZatcaConfig | null {
  const environment = env.ZATCA_ENVIRONMENT || null;
  const baseUrl = env.ZATCA_BASE_URL || null;
  if (!environment) {
    if (baseUrl) throw new ConfigError('ZATCA_BASE_URL needs ZATCA_ENVIRONMENT (sandbox, simulation or production)');
    return null;
  }
  if (!(ZATCA_ENVIRONMENTS as readonly string[]).includes(environment)) {
    throw new ConfigError(`ZATCA_ENVIRONMENT must be sandbox, simulation or production, got "${environment}"`);
  }
  const env_ = environment as ZatcaEnvironmentName;
  return {
    environment: env_,
    baseUrl: urlSetting('ZATCA_BASE_URL', baseUrl ?? ZATCA_PUBLISHED_BASE_URLS[env_]),
    timeoutMs: Math.max(100, intFrom('ZATCA_TIMEOUT_MS', 30_000, env)),
    maxAttempts: Math.max(1, intFrom('ZATCA_MAX_ATTEMPTS', 3, env)),
    retryBaseMs: intFrom('ZATCA_RETRY_BASE_MS', 1000, env),
    maxRetryAfterMs: intFrom('ZATCA_MAX_RETRY_AFTER_MS', 30_000, env),
  };
}

/** Official SML zones: the acceptance (test) network and the production network. */
export const PEPPOL_SML_ZONES = { test: 'acc.edelivery.tech.ec.europa.eu', production: 'edelivery.tech.ec.europa.eu' } as const;

export type PeppolRevocationCheck = 'off' | 'ocsp' | 'crl';

export interface PeppolConfig {
  /** The access point's key and certificate: a PKCS#12 file with its password, or a PEM key file and a PEM certificate file. */
  keystore: { kind: 'pkcs12'; path: string; password: string } | { kind: 'pem'; keyPath: string; certificatePath: string } | null;
  /** The trusted CA certificates: a PEM bundle file or a directory of PEM/DER certificate files. */
  truststorePath: string | null;
  /** The SML DNS zone participants are looked up in. */
  smlZone: string | null;
  /** DNS servers ("host" or "host:port") used for SML lookups instead of the system's resolvers. */
  dnsServers: string[] | null;
  /** The service's own AS4 endpoint URL as other access points reach it (https, possibly through a TLS proxy). */
  endpointUrl: string | null;
  revocationCheck: PeppolRevocationCheck;
  /** UAE: the tax authority's corner-5 participant ("scheme::value"). */
  corner5Participant: { scheme: string; value: string } | null;
  /** Worker threads of the AS4 endpoint (PEPPOL_RECEIVE_THREADS; 0 or null, the default: every step on the main thread). */
  receiveThreads: number | null;
}

/** The settings an access point still needs (environment variable names); empty when the access point is configured. */
export function peppolMissingSettings(peppol: PeppolConfig): string[] {
  const missing: string[] = [];
  if (!peppol.keystore) missing.push('PEPPOL_KEYSTORE (or PEPPOL_KEY and PEPPOL_CERTIFICATE)');
  if (!peppol.truststorePath) missing.push('PEPPOL_TRUSTSTORE');
  if (!peppol.smlZone) missing.push('PEPPOL_SML_ZONE');
  if (!peppol.endpointUrl) missing.push('PEPPOL_ENDPOINT_URL');
  return missing;
}

/** "ip", "ip:port", "[ipv6]:port" or a bare IPv6 address, as Node's resolver takes them. */
function isDnsServer(s: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s);
  if (bracketed) return net.isIPv6(bracketed[1]!) && (bracketed[2] === undefined || Number(bracketed[2]) <= 65535);
  if (net.isIPv6(s)) return true;
  const m = /^([^:]+)(?::(\d{1,5}))?$/.exec(s);
  return !!m && net.isIPv4(m[1]!) && (m[2] === undefined || Number(m[2]) <= 65535);
}

function peppolFrom(env: NodeJS.ProcessEnv): PeppolConfig {
  const keystorePath = env.PEPPOL_KEYSTORE || null;
  const keyPath = env.PEPPOL_KEY || null;
  const certificatePath = env.PEPPOL_CERTIFICATE || null;
  let keystore: PeppolConfig['keystore'] = null;
  if (keystorePath && (keyPath || certificatePath)) {
    throw new ConfigError('set either PEPPOL_KEYSTORE (PKCS#12) or PEPPOL_KEY and PEPPOL_CERTIFICATE (PEM), not both');
  }
  if (keystorePath) {
    if (env.PEPPOL_KEYSTORE_PASSWORD === undefined) throw new ConfigError('PEPPOL_KEYSTORE needs PEPPOL_KEYSTORE_PASSWORD (empty for a keystore without a password)');
    keystore = { kind: 'pkcs12', path: path.resolve(keystorePath), password: env.PEPPOL_KEYSTORE_PASSWORD };
    // Serialized (a log line, an error report), the password reads as redacted.
    Object.defineProperty(keystore, 'toJSON', { enumerable: false, value: () => ({ kind: 'pkcs12', path: path.resolve(keystorePath), password: '[redacted]' }) });
  } else if (keyPath || certificatePath) {
    if (!keyPath || !certificatePath) throw new ConfigError('PEPPOL_KEY and PEPPOL_CERTIFICATE go together (PEM private key file and PEM certificate file)');
    keystore = { kind: 'pem', keyPath: path.resolve(keyPath), certificatePath: path.resolve(certificatePath) };
  }
  const smlZone = env.PEPPOL_SML_ZONE ? env.PEPPOL_SML_ZONE.replace(/\.$/, '').toLowerCase() : null;
  if (smlZone && !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/.test(smlZone)) {
    throw new ConfigError(`PEPPOL_SML_ZONE must be a DNS zone such as ${PEPPOL_SML_ZONES.production}, got "${env.PEPPOL_SML_ZONE}"`);
  }
  let dnsServers: string[] | null = null;
  if (env.PEPPOL_DNS_SERVERS) {
    dnsServers = env.PEPPOL_DNS_SERVERS.split(',').map((s) => s.trim()).filter((s) => s !== '');
    const bad = dnsServers.find((s) => !isDnsServer(s));
    if (bad !== undefined || dnsServers.length === 0) throw new ConfigError(`PEPPOL_DNS_SERVERS must be a comma-separated list of IP addresses with optional :port, got "${env.PEPPOL_DNS_SERVERS}"`);
  }
  const endpointUrl = env.PEPPOL_ENDPOINT_URL || null;
  if (endpointUrl) {
    let ok = false;
    try {
      const u = new URL(endpointUrl);
      ok = (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password && !u.hash;
    } catch {
      ok = false;
    }
    if (!ok) throw new ConfigError(`PEPPOL_ENDPOINT_URL must be an absolute http(s) URL without credentials, got "${endpointUrl}"`);
  }
  const revocation = env.PEPPOL_REVOCATION_CHECK || 'off';
  if (revocation !== 'off' && revocation !== 'ocsp' && revocation !== 'crl') {
    throw new ConfigError(`PEPPOL_REVOCATION_CHECK must be off, ocsp or crl, got "${revocation}"`);
  }
  let corner5Participant: PeppolConfig['corner5Participant'] = null;
  if (env.PEPPOL_CORNER5_PARTICIPANT) {
    const raw = env.PEPPOL_CORNER5_PARTICIPANT;
    const at = raw.indexOf('::');
    if (at <= 0 || at + 2 >= raw.length) {
      throw new ConfigError(`PEPPOL_CORNER5_PARTICIPANT must be scheme::value, e.g. iso6523-actorid-upis::0235:1234567890, got "${raw}"`);
    }
    corner5Participant = { scheme: raw.slice(0, at), value: raw.slice(at + 2) };
  }
  return {
    keystore,
    truststorePath: env.PEPPOL_TRUSTSTORE ? path.resolve(env.PEPPOL_TRUSTSTORE) : null,
    smlZone,
    dnsServers,
    endpointUrl,
    revocationCheck: revocation,
    corner5Participant,
    receiveThreads: env.PEPPOL_RECEIVE_THREADS ? intFrom('PEPPOL_RECEIVE_THREADS', 0, env) : null,
  };
}

function intFrom(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

function boolFrom(name: string, fallback: boolean, env: NodeJS.ProcessEnv): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Whether one of several instances owns each projection (projections/ownership.ts). */
function projectionOwnership(value: string | undefined): Config['projections']['ownership'] {
  const mode = value || 'gather';
  if (mode !== 'gather' && mode !== 'off') throw new ConfigError(`PROJECTION_OWNERSHIP must be gather or off, got "${mode}"`);
  return mode;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const eventStoreUrl = env.EVENTSTORE_URL || null;
  if (eventStoreUrl && !/^(esdb|esdb\+discover|kurrentdb|kurrentdb\+discover):\/\//.test(eventStoreUrl)) {
    throw new ConfigError(`EVENTSTORE_URL must start with esdb:// or kurrentdb://, got "${eventStoreUrl}"`);
  }
  const searchEngine = env.SEARCH_ENGINE || 'postgres';
  if (searchEngine !== 'postgres' && searchEngine !== 'elasticsearch') {
    throw new ConfigError(`SEARCH_ENGINE must be postgres or elasticsearch, got "${searchEngine}"`);
  }
  const elasticsearchUrl = env.ELASTICSEARCH_URL || null;
  if (elasticsearchUrl && !/^https?:\/\//.test(elasticsearchUrl)) {
    throw new ConfigError(`ELASTICSEARCH_URL must start with http:// or https://, got "${elasticsearchUrl}"`);
  }
  if (searchEngine === 'elasticsearch' && !elasticsearchUrl) throw new ConfigError('SEARCH_ENGINE=elasticsearch needs ELASTICSEARCH_URL');
  let webhookSecretKey: Buffer | null = null;
  if (env.WEBHOOK_SECRET_ENCRYPTION_KEY) {
    const raw = env.WEBHOOK_SECRET_ENCRYPTION_KEY;
    webhookSecretKey = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
    if (webhookSecretKey.length !== 32) throw new ConfigError('WEBHOOK_SECRET_ENCRYPTION_KEY must be 32 bytes, base64 (44 characters) or hex (64 digits)');
  }
  const elasticsearchIndexPrefix = env.ELASTICSEARCH_INDEX_PREFIX || 'einvoicing';
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(elasticsearchIndexPrefix)) {
    throw new ConfigError(`ELASTICSEARCH_INDEX_PREFIX must be lowercase letters, digits, - and _, got "${elasticsearchIndexPrefix}"`);
  }
  return {
    databaseUrl: env.DATABASE_URL || null,
    embeddedPg: {
      dataDir: path.resolve(env.EMBEDDED_PG_DIR || 'var/pg'),
      port: intFrom('EMBEDDED_PG_PORT', 54329, env),
      database: env.EMBEDDED_PG_DATABASE || 'einvoicing',
    },
    eventStoreUrl,
    http: {
      host: env.HOST || '127.0.0.1',
      port: intFrom('PORT', 3000, env),
      bodyLimitBytes: intFrom('BODY_LIMIT_BYTES', 5 * 1024 * 1024, env),
    },
    logLevel: env.LOG_LEVEL || 'info',
    dbPoolSize: intFrom('DB_POOL_SIZE', 20, env),
    projections: {
      batchSize: intFrom('PROJECTION_BATCH_SIZE', 500, env),
      batchBytes: intFrom('PROJECTION_BATCH_BYTES', 2 * 1024 * 1024, env),
      waitTimeoutMs: intFrom('PROJECTION_WAIT_TIMEOUT_MS', 5000, env),
      stalledAfterMs: intFrom('PROJECTION_STALLED_AFTER_MS', 30000, env),
      ownership: projectionOwnership(env.PROJECTION_OWNERSHIP),
    },
    connectRateLimit: {
      perSecond: intFrom('CONNECT_RATE_LIMIT_PER_SECOND', 100, env),
      burst: intFrom('CONNECT_RATE_LIMIT_BURST', 200, env),
    },
    participantLookupRateLimit: {
      perSecond: intFrom('PARTICIPANT_LOOKUP_RATE_LIMIT_PER_SECOND', 5, env),
      burst: intFrom('PARTICIPANT_LOOKUP_RATE_LIMIT_BURST', 20, env),
    },
    dryRunRateLimit: { perMinute: intFrom('UNIFY_DRY_RUN_PER_MINUTE', 60, env) },
    writeLimit: {
      concurrency: intFrom('WRITE_CONCURRENCY', 32, env),
      queueLength: intFrom('WRITE_QUEUE_LENGTH', 256, env),
      queueTimeoutMs: intFrom('WRITE_QUEUE_TIMEOUT_MS', 2000, env),
    },
    search: { engine: searchEngine, elasticsearchUrl, elasticsearchIndexPrefix },
    delivery: {
      maxAttempts: Math.max(1, intFrom('DELIVERY_MAX_ATTEMPTS', 5, env)),
      retryBaseMs: intFrom('DELIVERY_RETRY_BASE_MS', 30_000, env),
      retryMaxMs: intFrom('DELIVERY_RETRY_MAX_MS', 15 * 60_000, env),
      startGraceMs: intFrom('DELIVERY_START_GRACE_MS', 200, env),
      concurrency: Math.max(1, intFrom('DELIVERY_CONCURRENCY', 32, env)),
      workerIntervalMs: Math.max(10, intFrom('DELIVERY_WORKER_INTERVAL_MS', 1000, env)),
      resumeAfterMs: Math.max(1000, intFrom('DELIVERY_RESUME_AFTER_MS', 5 * 60_000, env)),
      sandboxLatencyMs: intFrom('SANDBOX_LATENCY_MS', 0, env),
      sandboxFinalResultAfterMs: intFrom('SANDBOX_FINAL_RESULT_AFTER_MS', 0, env),
      peppolBuyerResponseWindowMs: intFrom('PEPPOL_BUYER_RESPONSE_WINDOW_MS', 0, env),
    },
    purchases: { maxXmlBytes: Math.max(1024, intFrom('PURCHASE_MAX_XML_BYTES', 10 * 1024 * 1024, env)) },
    webhooks: {
      allowPrivateTargets: boolFrom('WEBHOOK_ALLOW_PRIVATE_TARGETS', false, env),
      timeoutMs: Math.max(100, intFrom('WEBHOOK_TIMEOUT_MS', 10_000, env)),
      concurrency: Math.max(1, intFrom('WEBHOOK_CONCURRENCY', 256, env)),
      perSubscriptionConcurrency: Math.max(1, intFrom('WEBHOOK_SUBSCRIPTION_CONCURRENCY', 16, env)),
      workerIntervalMs: Math.max(10, intFrom('WEBHOOK_WORKER_INTERVAL_MS', 250, env)),
      secretEncryptionKey: webhookSecretKey,
    },
    peppol: peppolFrom(env),
    myinvois: myinvoisFrom(env),
    zatca: zatcaFrom(env),
  };
}
