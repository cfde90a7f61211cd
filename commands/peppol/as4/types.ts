/**
 * What the AS4 transport needs from the Peppol PKI (platform/peppol-pki.ts): the access point's own
 * identity (key and certificate) and the trust in other access points' certificates.
 */
export type { AccessPointIdentity, PeppolTrust, CertificateVerdict } from '../../../platform/peppol-pki.js';
