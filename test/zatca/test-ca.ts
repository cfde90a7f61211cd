/**
 * A test certificate authority made with OpenSSL (an independent implementation): it issues a
 * certificate for a CSR the service built, as ZATCA's CSID APIs would, so the tests hold real
 * certificates. A test fixture: nothing here runs in the service.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCa {
  dir: string;
  /** Issues a certificate for the CSR (PEM), keeping the CSR's extensions; answers base64 DER. */
  issue(csrPem: string, days?: number): string;
  /** The CA's certificate, PEM. */
  certificatePem: string;
  close(): void;
}

export const openssl = (args: string[], input?: string | Buffer): Buffer => execFileSync('openssl', args, { input, stdio: ['pipe', 'pipe', 'pipe'] });

export function openTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'zatca-test-ca-'));
  openssl(['ecparam', '-name', 'secp256k1', '-genkey', '-noout', '-out', join(dir, 'ca.key')]);
  openssl(['req', '-new', '-x509', '-key', join(dir, 'ca.key'), '-subj', '/C=SA/O=Test fixture/CN=Test ZATCA-like issuing CA', '-days', '30', '-sha256', '-out', join(dir, 'ca.pem')]);
  let serial = 1;
  return {
    dir,
    certificatePem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    issue(csrPem, days = 365) {
      const csr = join(dir, `req${serial}.pem`);
      const out = join(dir, `cert${serial}.pem`);
      writeFileSync(csr, csrPem);
      openssl(['x509', '-req', '-in', csr, '-CA', join(dir, 'ca.pem'), '-CAkey', join(dir, 'ca.key'), '-set_serial', String(0x1000 + serial++), '-days', String(days), '-sha256', '-copy_extensions', 'copyall', '-out', out]);
      return readFileSync(out, 'utf8').replace(/-----[^-]+-----|\s/g, '');
    },
    close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A binarySecurityToken as ZATCA's APIs answer it: the base64 of the certificate's base64 DER. */
export const binarySecurityToken = (base64Der: string) => Buffer.from(base64Der, 'latin1').toString('base64');
