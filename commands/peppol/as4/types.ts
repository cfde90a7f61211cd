/**
 * What the AS4 transport needs from the Peppol PKI: the access point's own identity (its key and
 * certificate) and the trust in other access points' certificates (chain to a configured Peppol CA,
 * validity, revocation where configured). Loaded from the configured keystore and trust store.
 */
export interface AccessPointIdentity {
  privateKeyPem: string;
  certificatePem: string;
  chainPem: string[];
  commonName: string;
}

export type CertificateVerdict = { ok: true; commonName: string } | { ok: false; reason: string };

export interface PeppolTrust {
  caCertificatesPem: string[];
  verifyCertificate(pem: string, at: Date, purpose: 'ap' | 'smp'): CertificateVerdict | Promise<CertificateVerdict>;
}
