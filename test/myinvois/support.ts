/**
 * Test support for the MyInvois suites: a taxpayer's RSA key and certificate issued by a test CA,
 * both made by OpenSSL (an independent implementation), and xmlsec1 verification of a signed document.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TaxpayerPki {
  dir: string;
  caPem: string;
  caPath: string;
  keyPem: string;
  certificatePem: string;
}

async function openssl(args: string[], cwd?: string): Promise<string> {
  try {
    const { stdout } = await run('openssl', args, { maxBuffer: 4 * 1024 * 1024, cwd });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.trim() || e.message}`);
  }
}

/** A test CA and a taxpayer certificate it issued (RSA 2048, subject with the TIN as MyInvois certificates carry it). */
export async function taxpayerPki(tin = 'C2584563200'): Promise<TaxpayerPki> {
  const dir = await mkdtemp(join(tmpdir(), 'myinvois-pki-'));
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '3650', '-subj', '/C=MY/O=Test LHDNM CA/CN=Test MyInvois Issuing CA'], dir);
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'taxpayer.key', '-out', 'taxpayer.csr', '-subj', `/C=MY/O=Kuala Lumpur Supplies Sdn Bhd/organizationIdentifier=${tin}/serialNumber=201901234567/CN=Kuala Lumpur Supplies Sdn Bhd`], dir);
  await openssl(['x509', '-req', '-in', 'taxpayer.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', '0x1a2b3c4d5e6f', '-days', '365', '-out', 'taxpayer.pem'], dir);
  return {
    dir,
    caPath: join(dir, 'ca.pem'),
    caPem: await readFile(join(dir, 'ca.pem'), 'utf8'),
    keyPem: await readFile(join(dir, 'taxpayer.key'), 'utf8'),
    certificatePem: await readFile(join(dir, 'taxpayer.pem'), 'utf8'),
  };
}

/** `xmlsec1 --verify` of a signed MyInvois document against the test CA: its verdict and output. */
export async function xmlsecVerify(pki: TaxpayerPki, xml: string | Buffer, name = 'signed.xml'): Promise<{ ok: boolean; output: string }> {
  const file = join(pki.dir, name);
  await writeFile(file, xml);
  try {
    const { stdout, stderr } = await run('xmlsec1', ['--verify', '--trusted-pem', pki.caPath, '--id-attr:Id', 'http://uri.etsi.org/01903/v1.3.2#:SignedProperties', file]);
    return { ok: true, output: `${stdout}${stderr}` };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

export { openssl };
