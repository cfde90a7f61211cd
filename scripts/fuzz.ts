/**
 * `npm run fuzz`: schemathesis (from PyPI, in a virtual environment under var/) against
 * /openapi.json of a running service, with a valid key of a bootstrapped workspace, over every
 * operation. Checks: no 5xx, status codes, content types, response headers and bodies conform
 * to the document, no response slower than 2 s. The service runs in this process on a fresh
 * embedded PostgreSQL in var/pg-fuzz (or DATABASE_URL), configured as a Peppol access point
 * with a test PKI generated into var/fuzz-pki (unless PEPPOL_KEYSTORE or PEPPOL_KEY is set), so
 * that POST /as4 is fuzzed as well: schemathesis has no serializer for its `multipart/related`
 * body, so scripts/fuzz_hooks.py gives it one that mutates a real AS4 message (signed by another
 * access point of the test PKI, encrypted to this one) with each generated value: spliced in,
 * written over, or in place of the SOAP part or of the attachment.
 *
 *   npm run fuzz                      # 100 examples per operation (FUZZ_MAX_EXAMPLES)
 *   FUZZ_MAX_EXAMPLES=10 npm run fuzz # the CI budget
 *   npm run fuzz -- --include-path /as4   # further arguments go to `schemathesis run`
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createAspAuthorization } from '../commands/connect/settings.js';
import { issueCredits } from '../commands/credits/pool.js';
import { creditsEngine } from '../commands/credits/snapshots.js';
import { createApiKey, createWorkspace } from '../commands/workspaces.js';
import { sampleDocument } from '../domain/validation/index.js';
import { buildUserMessage } from '../commands/peppol/as4/message.js';
import { generateInvoiceXml, type CoreDocument } from '../domain/artifacts/index.js';
import { peppolIdentifiersOf } from '../domain/peppol/identifiers.js';
import { buildSbdh } from '../domain/peppol/sbdh.js';
import { startService } from '../http/service.js';
import { createTestPki, type TestPki } from '../test/peppol/support/pki.js';
import { loadConfig } from '../platform/config.js';
import { createLogger } from '../platform/logger.js';

const SCHEMATHESIS_VERSION = '4.32.5';
const VENV = path.resolve('var/fuzz-venv');
const BIN = path.join(VENV, 'bin', 'schemathesis');
const maxExamples = Number(process.env.FUZZ_MAX_EXAMPLES ?? 100);
const workers = process.env.FUZZ_WORKERS ?? '1';

function ensureSchemathesis(): void {
  const installed = existsSync(BIN) && spawnSync(BIN, ['--version'], { encoding: 'utf8' }).stdout.includes(SCHEMATHESIS_VERSION);
  if (installed) return;
  console.log(`installing schemathesis ${SCHEMATHESIS_VERSION} into ${path.relative(process.cwd(), VENV)}`);
  const steps: [string, string[]][] = [
    ['python3', ['-m', 'venv', VENV]],
    [path.join(VENV, 'bin', 'pip'), ['install', '--quiet', `schemathesis==${SCHEMATHESIS_VERSION}`]],
  ];
  for (const [cmd, args] of steps) {
    const r = spawnSync(cmd, args, { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed`);
  }
}

ensureSchemathesis();
if (!process.env.DATABASE_URL) {
  process.env.EMBEDDED_PG_DIR = path.resolve('var/pg-fuzz');
  process.env.EMBEDDED_PG_PORT = process.env.FUZZ_PG_PORT ?? '54359';
  rmSync(process.env.EMBEDDED_PG_DIR, { recursive: true, force: true });
}
const AS4_TEMPLATE_DIR = path.resolve('var/fuzz-as4');

/** A real AS4 message to this access point (another access point of the test PKI sends a PINT AE invoice), for the hooks to mutate. */
function writeAs4Template(pki: TestPki): void {
  const doc = sampleDocument('AE', { lines: 2, documentNumber: 'FUZZ-AS4-1' }) as CoreDocument;
  const xml = generateInvoiceXml({ country: 'AE', documentType: { base: 'tax_invoice', modifiers: [] }, document: doc, uuid: 'fuzz-as4' }).xml;
  const ids = peppolIdentifiersOf(xml);
  const built = buildUserMessage(
    {
      messageId: 'fuzz-as4-1@fuzz',
      timestamp: new Date().toISOString(),
      conversationId: 'fuzz-as4-1',
      fromParty: pki.service2.commonName,
      toParty: pki.service.commonName,
      processId: ids.processId,
      documentTypeId: ids.documentTypeId,
      originalSender: ids.sender,
      finalRecipient: ids.receiver,
    },
    Buffer.from(buildSbdh(xml, ids, { instanceId: 'fuzz-as4-1', createdAt: new Date(), countryC1: 'AE' })),
    { privateKeyPem: pki.service2.keyPem, certificatePem: pki.service2.certPem, commonName: pki.service2.commonName },
    pki.service.certPem,
  );
  rmSync(AS4_TEMPLATE_DIR, { recursive: true, force: true });
  mkdirSync(AS4_TEMPLATE_DIR, { recursive: true });
  writeFileSync(path.join(AS4_TEMPLATE_DIR, 'message.bin'), built.body);
  writeFileSync(path.join(AS4_TEMPLATE_DIR, 'content-type.txt'), built.contentType);
}

if (!process.env.PEPPOL_KEYSTORE && !process.env.PEPPOL_KEY) {
  // A fresh test PKI each run (OpenSSL; nothing secret is kept): the access point's key, certificate and CA.
  const pkiDir = path.resolve('var/fuzz-pki');
  rmSync(pkiDir, { recursive: true, force: true });
  const pki = await createTestPki(pkiDir);
  writeAs4Template(pki);
  Object.assign(process.env, {
    PEPPOL_KEY: pki.service.keyPath,
    PEPPOL_CERTIFICATE: pki.service.certPath,
    PEPPOL_TRUSTSTORE: pki.caCertPath,
    PEPPOL_SML_ZONE: 'acc.edelivery.tech.ec.europa.eu',
    PEPPOL_ENDPOINT_URL: 'https://ap.fuzz.invalid/as4',
  });
}
const base = loadConfig();
const config = { ...base, connectRateLimit: { perSecond: 0, burst: 0 } };
const service = await startService({ config, port: 0, logger: createLogger('warn') });
let exitCode = 1;
try {
  const { store } = service.runtime;
  const ctx = () => ({ now: new Date(), actor: 'fuzz' });
  const settle = (p: Parameters<typeof service.runner.waitFor>[0]) => service.runner.waitFor(p, { timeoutMs: 10_000 });
  const ws = await createWorkspace(store, 'Fuzz workspace', ctx());
  await settle(ws.position);
  const key = await createApiKey(store, { workspaceId: ws.workspaceId, environment: 'sandbox', permission: 'read_write', role: 'owner', expiresAt: null }, ctx());
  await settle(key.position);
  const auth = await createAspAuthorization(
    store,
    { workspaceId: ws.workspaceId, environment: 'sandbox', tin: '1234567890', email: 'finance@fuzz.ae', legalName: 'Fuzz LLC', legalNameArabic: null, vatTrn: null },
    ctx(),
  );
  void auth;
  const issued = await issueCredits(creditsEngine(service.deps), { workspaceId: ws.workspaceId, environment: 'sandbox', amount: 1000, expiresAt: null }, ctx());
  if (issued.outcome.position) await settle(issued.outcome.position);
  const company = await fetch(`${service.url}/v3/connect/companies`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sourceName: 'Fuzz ERP', sourceVersion: 'v1', countryCode: 'AE', tin: '1234567890', contactPersonEmail: 'finance@fuzz.ae', branchName: 'Head office', platformEnvironment: 'sandbox' }),
  });
  if (company.status !== 201) throw new Error(`bootstrap: onboarding answered ${company.status}: ${await company.text()}`);
  const companyId = ((await company.json()) as { data: { companyId: string } }).data.companyId;
  const submitted = await fetch(`${service.url}/api/v3/unify`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.apiKey}`, 'content-type': 'application/json', 'new-api': 'true' },
    body: JSON.stringify({
      country: 'AE',
      environment: 'sandbox',
      purpose: 'invoicing',
      source: 'Fuzz ERP:v1',
      documentType: { base: 'tax_invoice', modifiers: [] },
      payload: sampleDocument('AE', { lines: 2, documentNumber: 'FUZZ-1' }),
    }),
  });
  if (submitted.status !== 200) throw new Error(`bootstrap: submission answered ${submitted.status}: ${await submitted.text()}`);
  const documentId = ((await submitted.json()) as { documentId: string }).documentId;
  // Identifiers of the bootstrapped workspace, drawn for path and query parameters most of the
  // time (the rest stay random), so the fuzzer reaches past "not found".
  const configFile = path.resolve('var/fuzz-schemathesis.toml');
  const dictionary = (name: string, value: string) => `[dictionaries.${name}]\nvalues = [${JSON.stringify(value)}]\n`;
  writeFileSync(
    configFile,
    [
      dictionary('companies', companyId),
      dictionary('documents', documentId),
      dictionary('sources', 'Fuzz ERP'),
      dictionary('versions', 'v1'),
      '[parameters]',
      '"path.companyId" = { dictionary = "companies", probability = 0.7 }',
      '"path.documentId" = { dictionary = "documents", probability = 0.7 }',
      '"path.sourceName" = { dictionary = "sources", probability = 0.7 }',
      '"query.sourceVersion" = { dictionary = "versions", probability = 0.7 }',
      '',
    ].join('\n'),
  );

  const args = [
    '--config-file',
    configFile,
    'run',
    `${service.url}/openapi.json`,
    '--header',
    `Authorization: Bearer ${key.apiKey}`,
    '--checks',
    'not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance',
    '--max-response-time',
    '2',
    '--max-examples',
    String(maxExamples),
    '--workers',
    workers,
    '--phases',
    'examples,coverage,fuzzing',
    '--generation-database',
    'none',
    '--report',
    'junit',
    '--report-dir',
    'var/fuzz-report',
    '--no-color',
    '--seed',
    process.env.FUZZ_SEED ?? '1',
    ...process.argv.slice(2),
  ];
  console.log(`schemathesis against ${service.url}/openapi.json, ${maxExamples} examples per operation`);
  exitCode = await new Promise<number>((resolve) => {
    const hooks = existsSync(path.join(AS4_TEMPLATE_DIR, 'message.bin'))
      ? { SCHEMATHESIS_HOOKS: 'fuzz_hooks', PYTHONPATH: path.resolve('scripts'), PYTHONDONTWRITEBYTECODE: '1', FUZZ_AS4_TEMPLATE_DIR: AS4_TEMPLATE_DIR }
      : { SCHEMATHESIS_HOOKS: '' };
    const child = spawn(BIN, args, { stdio: 'inherit', env: { ...process.env, ...hooks } });
    child.on('exit', (code) => resolve(code ?? 1));
  });
} finally {
  await service.close();
}
process.exit(exitCode);
