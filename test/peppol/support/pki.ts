/**
 * A Peppol-like test PKI, generated at test time with the OpenSSL command-line tool (nothing is
 * committed): a test CA, a second CA that carries the SAME subject name (so a check that compares
 * issuer names only cannot tell them apart), access-point certificates for the service (two
 * instances), the phase4 peer, a rogue access point signed by the other CA, an SMP signing
 * certificate and an access-point certificate that has already expired.
 *
 * RSA 2048, SHA-256 signatures, subjects shaped like OpenPeppol's (C, O, OU, CN with the
 * "POP000001"-style seat id). Each party also gets a PKCS#12 keystore holding its key, its
 * certificate and the issuing CA certificate (the chain), alias = the party's common name.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestParty {
  commonName: string;
  certPem: string;
  keyPem: string;
  certPath: string;
  keyPath: string;
  p12Path: string;
  p12Password: string;
}

export interface TestPki {
  dir: string;
  caCertPem: string;
  caCertPath: string;
  otherCaCertPem: string;
  otherCaCertPath: string;
  /** The service's access point, signed by the test CA. */
  service: TestParty;
  /** A second instance of the service acting as another access point. */
  service2: TestParty;
  /** The phase4 peer's access point. */
  peer: TestParty;
  /** Signed by the OTHER CA, whose subject name equals the test CA's. */
  rogue: TestParty;
  /** An SMP signing certificate, signed by the test CA. */
  smp: TestParty;
  /** An access-point certificate whose validity ended before the test run, signed by the test CA. */
  expired: TestParty;
}

/** Both CAs carry this very subject: only a signature check separates them. */
export const TEST_CA_SUBJECT = '/C=BE/O=OpenPEPPOL AISBL/OU=FOR TEST ONLY/CN=PEPPOL ACCESS POINT TEST CA - G2';

const CA_DAYS = 3650;
const LEAF_DAYS = 730;

const extensions = `
[ req ]
distinguished_name = req_dn
prompt = no
[ req_dn ]
CN = unused

[ ca_ext ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[ ap_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment, dataEncipherment
extendedKeyUsage = clientAuth, serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always

[ smp_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
`;

function caConfig(caDir: string): string {
  return `${extensions}
[ ca ]
default_ca = ca_default
[ ca_default ]
dir = ${caDir}
database = $dir/index.txt
new_certs_dir = $dir/issued
serial = $dir/serial
default_md = sha256
policy = policy_any
unique_subject = no
copy_extensions = none
email_in_dn = no
preserve = yes
[ policy_any ]
countryName = optional
organizationName = optional
organizationalUnitName = optional
commonName = supplied
`;
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args, { maxBuffer: 4 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.trim() || e.message}`);
  }
}

/** ASN.1 GeneralizedTime as `openssl ca -startdate/-enddate` takes it. */
function asn1Time(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, '').replace(/\.\d+Z$/, 'Z');
}

interface Ca {
  dir: string;
  certPath: string;
  keyPath: string;
  configPath: string;
}

async function newKey(path: string): Promise<void> {
  await openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', path]);
}

async function createCa(dir: string): Promise<Ca> {
  await mkdir(join(dir, 'issued'), { recursive: true });
  const configPath = join(dir, 'openssl.cnf');
  await writeFile(configPath, caConfig(dir));
  await writeFile(join(dir, 'index.txt'), '');
  // A random positive 128-bit serial to start from (the leading nibble below 8 keeps it positive).
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  await writeFile(join(dir, 'serial'), `${serial.toString('hex').toUpperCase()}\n`);
  const keyPath = join(dir, 'ca.key.pem');
  const certPath = join(dir, 'ca.cert.pem');
  await newKey(keyPath);
  await openssl([
    'req', '-config', configPath, '-x509', '-new', '-key', keyPath, '-sha256', '-days', String(CA_DAYS),
    '-subj', TEST_CA_SUBJECT, '-extensions', 'ca_ext', '-set_serial', `0x${randomBytes(8).toString('hex')}`,
    '-out', certPath,
  ]);
  return { dir, certPath, keyPath, configPath };
}

async function issue(
  ca: Ca,
  outDir: string,
  spec: { name: string; subject: string; ext: 'ap_ext' | 'smp_ext'; notBefore: Date; notAfter: Date },
): Promise<TestParty> {
  const commonName = /\/CN=([^/]+)$/.exec(spec.subject)![1]!;
  const keyPath = join(outDir, `${spec.name}.key.pem`);
  const csrPath = join(outDir, `${spec.name}.csr.pem`);
  const certPath = join(outDir, `${spec.name}.cert.pem`);
  const p12Path = join(outDir, `${spec.name}.p12`);
  const p12Password = randomBytes(12).toString('base64url');
  await newKey(keyPath);
  await openssl(['req', '-config', ca.configPath, '-new', '-key', keyPath, '-subj', spec.subject, '-out', csrPath]);
  await openssl([
    'ca', '-batch', '-config', ca.configPath, '-extensions', spec.ext, '-notext', '-md', 'sha256',
    '-keyfile', ca.keyPath, '-cert', ca.certPath,
    '-startdate', asn1Time(spec.notBefore), '-enddate', asn1Time(spec.notAfter),
    '-in', csrPath, '-out', certPath,
  ]);
  await openssl([
    'pkcs12', '-export', '-inkey', keyPath, '-in', certPath, '-certfile', ca.certPath, '-name', commonName,
    '-passout', `pass:${p12Password}`, '-out', p12Path,
  ]);
  const [certPem, keyPem] = await Promise.all([readFile(certPath, 'utf8'), readFile(keyPath, 'utf8')]);
  return { commonName, certPem, keyPem, certPath, keyPath, p12Path, p12Password };
}

function apSubject(org: string, cn: string, country = 'AE'): string {
  return `/C=${country}/O=${org}/OU=PEPPOL TEST AP/CN=${cn}`;
}

/**
 * Generates the whole test PKI under `dir` (a fresh temporary directory when omitted) and returns
 * the PEM texts and file paths. Takes about a second (seven RSA keys).
 */
export async function createTestPki(dir?: string): Promise<TestPki> {
  const root = dir ?? (await mkdtemp(join(tmpdir(), 'peppol-pki-')));
  await mkdir(root, { recursive: true });
  const [ca, otherCa] = await Promise.all([createCa(join(root, 'test-ca')), createCa(join(root, 'other-ca'))]);
  const now = Date.now();
  const day = 24 * 3600 * 1000;
  const valid = { notBefore: new Date(now - day), notAfter: new Date(now + LEAF_DAYS * day) };
  const expiredDates = { notBefore: new Date(now - 400 * day), notAfter: new Date(now - 30 * day) };
  // `openssl ca` keeps one index per CA: issue from the same CA one after the other.
  const service = await issue(ca, root, { name: 'service', subject: apSubject('Ledger Service Test AP', 'POP000001'), ext: 'ap_ext', ...valid });
  const service2 = await issue(ca, root, { name: 'service2', subject: apSubject('Ledger Service Test AP 2', 'POP000002'), ext: 'ap_ext', ...valid });
  const peer = await issue(ca, root, { name: 'peer', subject: apSubject('phase4 Test Peer', 'POP000003', 'BE'), ext: 'ap_ext', ...valid });
  const smp = await issue(ca, root, { name: 'smp', subject: '/C=BE/O=Test SMP Operator/OU=PEPPOL TEST SMP/CN=PSMP000001', ext: 'smp_ext', ...valid });
  const expired = await issue(ca, root, { name: 'expired', subject: apSubject('Expired Test AP', 'POP000005'), ext: 'ap_ext', ...expiredDates });
  const rogue = await issue(otherCa, root, { name: 'rogue', subject: apSubject('Rogue Test AP', 'POP000009'), ext: 'ap_ext', ...valid });
  const [caCertPem, otherCaCertPem] = await Promise.all([readFile(ca.certPath, 'utf8'), readFile(otherCa.certPath, 'utf8')]);
  return {
    dir: root,
    caCertPem,
    caCertPath: ca.certPath,
    otherCaCertPem,
    otherCaCertPath: otherCa.certPath,
    service,
    service2,
    peer,
    rogue,
    smp,
    expired,
  };
}
