/**
 * Peppol PKI: the access point's own key and certificate (PKCS#12 keystore or PEM files) and the
 * trust store of CA certificates that access point and SMP certificates must chain to.
 *
 * Chain checks are real: each link's signature is verified with the issuer's public key, every
 * certificate of the chain must be valid at the given time, issuers must be CA certificates, and
 * the path must end at a certificate of the trust store (issuer names alone never suffice).
 * Peppol's CAs are split by purpose (an "ACCESS POINT" CA and a "SERVICE METADATA PUBLISHER" CA):
 * when the trust store holds CAs of both kinds (named so in their common names), each vouches only
 * for its own purpose; a trust store without that split (a private test CA) vouches for both. Revocation (CRL or OCSP) is checked when configured, off by default.
 *
 * Errors name the file and what is wrong, never a password or key material.
 */
import { createHash, createPrivateKey, createPublicKey, verify as verifySignature, X509Certificate, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import forge from 'node-forge';
import * as asn1js from 'asn1js';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import * as ocsp from '@peculiar/asn1-ocsp';
import {
  AlgorithmIdentifier,
  AuthorityInfoAccessSyntax,
  Certificate,
  CertificateList,
  CRLDistributionPoints,
  id_ad_ocsp,
  id_ce_cRLDistributionPoints,
  id_pe_authorityInfoAccess,
  type GeneralName,
} from '@peculiar/asn1-x509';
import { LRUCache } from 'lru-cache';
import { ConfigError, peppolMissingSettings, type PeppolConfig, type PeppolRevocationCheck } from './config.js';

export interface AccessPointIdentity {
  privateKeyPem: string;
  certificatePem: string;
  /** Intermediate certificates that came with the keystore (may be empty). */
  chainPem: string[];
  commonName: string;
}

export type CertificatePurpose = 'ap' | 'smp';
export type CertificateVerdict = { ok: true; commonName: string } | { ok: false; reason: string };

export interface PeppolTrust {
  caCertificatesPem: string[];
  /**
   * Verifies a certificate's chain to the trust store at a time, for a purpose. Synchronous: with
   * revocation checking on, it uses revocation data fetched earlier by `verifyCertificateOnline`
   * (or `refreshRevocation`), and refuses a certificate whose revocation status is not known.
   */
  verifyCertificate(pem: string, at: Date, purpose: CertificatePurpose): CertificateVerdict;
  /** Fetches (or reuses cached) revocation data when configured, then verifies as `verifyCertificate`. */
  verifyCertificateOnline(pem: string, at: Date, purpose: CertificatePurpose): Promise<CertificateVerdict>;
  /** Fetches the revocation data of a certificate (no-op when revocation checking is off). */
  refreshRevocation(pem: string, at: Date): Promise<void>;
  readonly revocationCheck: PeppolRevocationCheck;
}

/**
 * Parsed certificates by their PEM text. Every AS4 message carries its sender's certificate and
 * every receipt its receiver's; parsing one costs more than the RSA check it serves, and a network
 * has few access points, so the parsed form is kept (bounded; the PEM text is the key).
 */
const parsedCertificates = new LRUCache<string, X509Certificate>({ max: 1000 });

/** The X.509 certificate of a PEM text, parsed once (throws on a text that is not one). */
export function certificateOf(pem: string): X509Certificate {
  let cert = parsedCertificates.get(pem);
  if (!cert) {
    cert = new X509Certificate(pem);
    parsedCertificates.set(pem, cert);
  }
  return cert;
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The CN of a certificate's subject (or issuer) as Node prints it ("C=BE\nO=…\nCN=…"). */
export function commonNameOf(dn: string): string | null {
  for (const line of dn.split('\n')) {
    if (line.startsWith('CN=')) return line.slice(3);
  }
  return null;
}

/** A PEM certificate from base64 DER (as SMP metadata and WS-Security tokens carry it). */
export function pemFromBase64Der(b64: string): string {
  const body = b64.replace(/\s+/g, '');
  const lines = body.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

function readFileOr(setting: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(`${setting} ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'not readable (permission denied)' : `cannot be read (${code ?? 'error'})`}`);
  }
}

function parseCertificates(setting: string, file: string, bytes: Buffer): X509Certificate[] {
  const text = bytes.toString('latin1');
  const pems = text.match(PEM_CERT);
  try {
    if (pems) return pems.map((p) => new X509Certificate(p));
    return [new X509Certificate(bytes)];
  } catch {
    throw new ConfigError(`${setting} ${file}: not a PEM or DER X.509 certificate`);
  }
}

function samePublicKey(a: KeyObject, b: KeyObject): boolean {
  return a.export({ type: 'spki', format: 'der' }).equals(b.export({ type: 'spki', format: 'der' }));
}

function identityFrom(setting: string, file: string, privateKeyPem: string, certs: X509Certificate[]): AccessPointIdentity {
  let key: KeyObject;
  try {
    key = createPrivateKey(privateKeyPem);
  } catch {
    throw new ConfigError(`${setting} ${file}: the private key cannot be read (an encrypted PEM key is not supported; use a PKCS#12 keystore with a password)`);
  }
  const publicKey = createPublicKey(key);
  const leaf = certs.find((c) => samePublicKey(c.publicKey, publicKey));
  if (!leaf) throw new ConfigError(`${setting} ${file}: no certificate matches the private key`);
  const commonName = commonNameOf(leaf.subject);
  if (!commonName) throw new ConfigError(`${setting} ${file}: the certificate has no common name (CN)`);
  return {
    privateKeyPem: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
    certificatePem: leaf.toString(),
    chainPem: certs.filter((c) => c !== leaf).map((c) => c.toString()),
    commonName,
  };
}

function fromPkcs12(file: string, password: string): AccessPointIdentity {
  const bytes = readFileOr('PEPPOL_KEYSTORE', file);
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    const asn1 = forge.asn1.fromDer(forge.util.createBuffer(bytes.toString('binary')));
    p12 = forge.pkcs12.pkcs12FromAsn1(asn1, false, password);
  } catch {
    throw new ConfigError(`PEPPOL_KEYSTORE ${file}: cannot be opened (wrong PEPPOL_KEYSTORE_PASSWORD, or not a PKCS#12 file)`);
  }
  const shrouded = forge.pki.oids.pkcs8ShroudedKeyBag as string;
  const plain = forge.pki.oids.keyBag as string;
  const certBag = forge.pki.oids.certBag as string;
  const keyBags = [...(p12.getBags({ bagType: shrouded })[shrouded] ?? []), ...(p12.getBags({ bagType: plain })[plain] ?? [])];
  const keyBag = keyBags.find((b) => b.key);
  if (!keyBag?.key) throw new ConfigError(`PEPPOL_KEYSTORE ${file}: holds no RSA private key`);
  const certBags = p12.getBags({ bagType: certBag })[certBag] ?? [];
  const certs: X509Certificate[] = [];
  for (const bag of certBags) {
    if (!bag.cert) continue;
    certs.push(new X509Certificate(forge.pki.certificateToPem(bag.cert)));
  }
  return identityFrom('PEPPOL_KEYSTORE', file, forge.pki.privateKeyToPem(keyBag.key as forge.pki.rsa.PrivateKey), certs);
}

/**
 * The access point's identity. Throws a ConfigError (one line, no secret) when the keystore is
 * missing, unreadable, protected by another password, or its certificate is not valid today.
 */
export function loadAccessPointIdentity(config: PeppolConfig, now: Date = new Date()): AccessPointIdentity {
  const ks = config.keystore;
  if (!ks) throw new ConfigError('the Peppol access point needs PEPPOL_KEYSTORE (or PEPPOL_KEY and PEPPOL_CERTIFICATE)');
  let identity: AccessPointIdentity;
  let setting: string;
  if (ks.kind === 'pkcs12') {
    setting = `PEPPOL_KEYSTORE ${ks.path}`;
    identity = fromPkcs12(ks.path, ks.password);
  } else {
    setting = `PEPPOL_CERTIFICATE ${ks.certificatePath}`;
    const keyPem = readFileOr('PEPPOL_KEY', ks.keyPath).toString('utf8');
    const certs = parseCertificates('PEPPOL_CERTIFICATE', ks.certificatePath, readFileOr('PEPPOL_CERTIFICATE', ks.certificatePath));
    identity = identityFrom('PEPPOL_KEY', ks.keyPath, keyPem, certs);
  }
  const cert = new X509Certificate(identity.certificatePem);
  if (now < new Date(cert.validFrom)) throw new ConfigError(`${setting}: the access point certificate is not valid before ${new Date(cert.validFrom).toISOString()}`);
  if (now > new Date(cert.validTo)) throw new ConfigError(`${setting}: the access point certificate expired on ${new Date(cert.validTo).toISOString()}`);
  return identity;
}

function readTrustStore(file: string): X509Certificate[] {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    throw new ConfigError(`PEPPOL_TRUSTSTORE ${file}: no such file or directory`);
  }
  const files = stat.isDirectory()
    ? fs
        .readdirSync(file)
        .filter((f) => /\.(pem|crt|cer|der)$/i.test(f))
        .sort()
        .map((f) => path.join(file, f))
    : [file];
  const certs = files.flatMap((f) => parseCertificates('PEPPOL_TRUSTSTORE', f, readFileOr('PEPPOL_TRUSTSTORE', f)));
  if (certs.length === 0) throw new ConfigError(`PEPPOL_TRUSTSTORE ${file}: holds no certificate (.pem, .crt, .cer or .der)`);
  const notCa = certs.find((c) => !c.ca);
  if (notCa) throw new ConfigError(`PEPPOL_TRUSTSTORE ${file}: "${notCa.subject.replace(/\n/g, ', ')}" is not a CA certificate`);
  return certs;
}

function purposeOfCa(ca: X509Certificate): CertificatePurpose | null {
  const cn = commonNameOf(ca.subject) ?? '';
  if (/ACCESS\s*POINT/i.test(cn)) return 'ap';
  if (/SERVICE\s*METADATA\s*PUBLISHER|\bSMP\b/i.test(cn)) return 'smp';
  return null;
}

/** Revocation data kept between checks: per certificate fingerprint, until the data's own expiry. */
interface RevocationEntry {
  revoked: boolean;
  reason: string;
  /** The data says nothing after this time (CRL nextUpdate / OCSP nextUpdate, or one hour). */
  validUntil: number;
}

const REVOCATION_FETCH_TIMEOUT_MS = 10_000;

async function httpGet(url: string, init?: RequestInit): Promise<Buffer> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(REVOCATION_FETCH_TIMEOUT_MS) });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

const SIGNATURE_HASHES: Record<string, string> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
};

/** The DER bytes of the first element (the signed part) of a signed ASN.1 structure, as received. */
function signedPart(der: Buffer): Buffer {
  const parsed = asn1js.fromBER(new Uint8Array(der));
  if (parsed.offset === -1) throw new Error('not DER');
  const first = (parsed.result as asn1js.Sequence).valueBlock.value[0];
  if (!first) throw new Error('empty structure');
  return Buffer.from(first.valueBeforeDecodeView);
}

function checkSigned(signed: Buffer, algorithm: string, signature: ArrayBuffer, key: KeyObject): boolean {
  const hash = SIGNATURE_HASHES[algorithm];
  if (!hash) throw new Error(`unsupported signature algorithm ${algorithm}`);
  return verifySignature(hash, signed, key, Buffer.from(signature));
}

function extensionOf<T>(cert: X509Certificate, oid: string, type: new () => T): T | null {
  const parsed = AsnConvert.parse(cert.raw, Certificate);
  const ext = parsed.tbsCertificate.extensions?.find((e) => e.extnID === oid);
  return ext ? AsnConvert.parse(ext.extnValue.buffer, type) : null;
}

function httpUris(names: GeneralName[] | undefined): string[] {
  return (names ?? []).map((n) => n.uniformResourceIdentifier).filter((u): u is string => typeof u === 'string' && /^https?:\/\//.test(u));
}

function serialOf(cert: X509Certificate): Buffer {
  return Buffer.from(AsnConvert.parse(cert.raw, Certificate).tbsCertificate.serialNumber);
}

async function crlStatus(cert: X509Certificate, issuer: X509Certificate, at: Date): Promise<RevocationEntry> {
  const points = extensionOf(cert, id_ce_cRLDistributionPoints, CRLDistributionPoints);
  const urls = [...(points ?? [])].flatMap((dp) => httpUris(dp.distributionPoint?.fullName));
  if (urls.length === 0) throw new Error('the certificate names no CRL distribution point');
  const serial = serialOf(cert);
  let lastError: unknown = null;
  for (const url of urls) {
    try {
      let der = await httpGet(url);
      const text = der.toString('latin1');
      if (text.includes('-----BEGIN X509 CRL-----')) der = Buffer.from(text.replace(/-----(BEGIN|END) X509 CRL-----|\s+/g, ''), 'base64');
      const crl = AsnConvert.parse(der, CertificateList);
      if (!checkSigned(signedPart(der), crl.signatureAlgorithm.algorithm, crl.signature, issuer.publicKey)) {
        throw new Error(`the CRL at ${url} is not signed by the certificate's issuer`);
      }
      const nextUpdate = crl.tbsCertList.nextUpdate?.getTime();
      if (nextUpdate !== undefined && nextUpdate.getTime() < at.getTime()) throw new Error(`the CRL at ${url} is out of date (next update ${nextUpdate.toISOString()})`);
      const validUntil = nextUpdate?.getTime() ?? at.getTime() + 3600_000;
      const entry = (crl.tbsCertList.revokedCertificates ?? []).find((r) => Buffer.from(r.userCertificate).equals(serial));
      return entry
        ? { revoked: true, reason: `revoked on ${entry.revocationDate.getTime().toISOString()} (CRL ${url})`, validUntil }
        : { revoked: false, reason: '', validUntil };
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

async function ocspStatus(cert: X509Certificate, issuer: X509Certificate, at: Date): Promise<RevocationEntry> {
  const aia = extensionOf(cert, id_pe_authorityInfoAccess, AuthorityInfoAccessSyntax);
  const urls = httpUris([...(aia ?? [])].filter((d) => d.accessMethod === id_ad_ocsp).map((d) => d.accessLocation));
  if (urls.length === 0) throw new Error('the certificate names no OCSP responder');
  const sha1 = (b: ArrayBuffer | Uint8Array) => createHash('sha1').update(Buffer.from(b as ArrayBuffer)).digest();
  const parsedIssuer = AsnConvert.parse(issuer.raw, Certificate);
  const serial = serialOf(cert);
  const certId = new ocsp.CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: '1.3.14.3.2.26', parameters: null }),
    issuerNameHash: new OctetString(sha1(AsnConvert.serialize(parsedIssuer.tbsCertificate.subject))),
    issuerKeyHash: new OctetString(sha1(parsedIssuer.tbsCertificate.subjectPublicKeyInfo.subjectPublicKey)),
    serialNumber: new Uint8Array(serial).buffer,
  });
  const request = new ocsp.OCSPRequest({ tbsRequest: new ocsp.TBSRequest({ requestList: [new ocsp.Request({ reqCert: certId })] }) });
  const body = Buffer.from(AsnConvert.serialize(request));
  let lastError: unknown = null;
  for (const url of urls) {
    try {
      const bytes = await httpGet(url, { method: 'POST', headers: { 'content-type': 'application/ocsp-request' }, body });
      const response = AsnConvert.parse(bytes, ocsp.OCSPResponse);
      if (response.responseStatus !== ocsp.OCSPResponseStatus.successful || !response.responseBytes) {
        throw new Error(`the OCSP responder ${url} answered status ${response.responseStatus}`);
      }
      const basicDer = Buffer.from(response.responseBytes.response.buffer);
      const basic = AsnConvert.parse(basicDer, ocsp.BasicOCSPResponse);
      // Signed by the issuer itself, or by a responder certificate that the issuer signed.
      const signers = [issuer, ...(basic.certs ?? []).map((c) => new X509Certificate(Buffer.from(AsnConvert.serialize(c)))).filter((c) => c.checkIssued(issuer) && c.verify(issuer.publicKey))];
      const tbs = signedPart(basicDer);
      if (!signers.some((s) => checkSigned(tbs, basic.signatureAlgorithm.algorithm, basic.signature, s.publicKey))) {
        throw new Error(`the OCSP response from ${url} is not signed by the certificate's issuer or its responder`);
      }
      const single = basic.tbsResponseData.responses.find((r) => Buffer.from(r.certID.serialNumber).equals(serial));
      if (!single) throw new Error(`the OCSP response from ${url} does not cover the certificate`);
      const validUntil = single.nextUpdate ? single.nextUpdate.getTime() : at.getTime() + 3600_000;
      if (single.certStatus.revoked) return { revoked: true, reason: `revoked on ${single.certStatus.revoked.revocationTime.toISOString()} (OCSP ${url})`, validUntil };
      if (single.certStatus.unknown !== undefined) throw new Error(`the OCSP responder ${url} does not know the certificate`);
      return { revoked: false, reason: '', validUntil };
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

/** The trust store. Throws a ConfigError when it is missing, empty or holds a non-CA certificate. */
export function loadPeppolTrust(config: PeppolConfig): PeppolTrust {
  if (!config.truststorePath) throw new ConfigError('the Peppol access point needs PEPPOL_TRUSTSTORE');
  const cas = readTrustStore(config.truststorePath);
  return createPeppolTrust(cas.map((c) => c.toString()), config.revocationCheck);
}

/** A trust over CA certificates given as PEM (loadPeppolTrust reads them from the trust store). */
export function createPeppolTrust(caCertificatesPem: string[], revocationCheck: PeppolRevocationCheck = 'off'): PeppolTrust {
  const cas = caCertificatesPem.map((p) => new X509Certificate(p));
  // Purposes are kept apart when the trust store holds CAs of both kinds (as OpenPeppol's does).
  const purposes = new Set(cas.map(purposeOfCa));
  const separatePurposes = purposes.has('ap') && purposes.has('smp');
  const revocation = new Map<string, RevocationEntry>();
  /** Why the last fetch of a certificate's revocation data failed (kept for the refusal's reason). */
  const revocationFailures = new Map<string, string>();

  const issuerOf = (cert: X509Certificate): X509Certificate | null =>
    cas.find((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey)) ?? null;

  /**
   * The path from the certificate to the trust store (leaf first), or why it has none. It does not
   * depend on the time (each link is found by its signature), so it is worked out once per
   * certificate; the validity dates along it are checked on every use.
   */
  function pathOf(cert: X509Certificate): { path: X509Certificate[] } | { reason: string } {
    const chain = [cert];
    let current = cert;
    for (let depth = 0; depth < 8; depth++) {
      const issuer = issuerOf(current);
      if (!issuer) {
        if (depth === 0) return { reason: `not issued by a trusted CA (issuer "${commonNameOf(current.issuer) ?? current.issuer}" is not in the trust store, or did not sign it)` };
        return { path: chain }; // a trust store CA whose own issuer is not in the store is a trust anchor
      }
      chain.push(issuer);
      if (issuer.checkIssued(issuer) && issuer.verify(issuer.publicKey)) return { path: chain };
      current = issuer;
    }
    return { reason: 'the certificate chain is too long' };
  }

  /** What a certificate is, apart from the time it is checked at: parsed and its path found once. */
  interface Examined {
    cert: X509Certificate;
    commonName: string | null;
    validFrom: number;
    validTo: number;
    path: { path: { ca: X509Certificate; validFrom: number; validTo: number }[] } | { reason: string };
  }
  const examined = new LRUCache<string, Examined | { unreadable: true }>({ max: 1000 });

  function examine(pem: string): Examined | { unreadable: true } {
    let found = examined.get(pem);
    if (!found) {
      let cert: X509Certificate | null = null;
      try {
        cert = certificateOf(pem);
      } catch {
        found = { unreadable: true };
      }
      if (cert) {
        const p = cert.ca ? { reason: '' } : pathOf(cert);
        found = {
          cert,
          commonName: commonNameOf(cert.subject),
          validFrom: new Date(cert.validFrom).getTime(),
          validTo: new Date(cert.validTo).getTime(),
          path: 'reason' in p ? p : { path: p.path.slice(1).map((ca) => ({ ca, validFrom: new Date(ca.validFrom).getTime(), validTo: new Date(ca.validTo).getTime() })) },
        };
      }
      examined.set(pem, found!);
    }
    return found!;
  }

  function verifyCertificate(pem: string, at: Date, purpose: CertificatePurpose): CertificateVerdict {
    const found = examine(pem);
    if ('unreadable' in found) return { ok: false, reason: 'not an X.509 certificate' };
    const { cert, commonName } = found;
    if (!commonName) return { ok: false, reason: 'the certificate has no common name (CN)' };
    if (cert.ca) return { ok: false, reason: `"${commonName}" is a CA certificate, not an ${purpose === 'ap' ? 'access point' : 'SMP'} certificate` };
    const t = at.getTime();
    if (t < found.validFrom) return { ok: false, reason: `the certificate "${commonName}" is not valid before ${new Date(found.validFrom).toISOString()}` };
    if (t > found.validTo) return { ok: false, reason: `the certificate "${commonName}" expired on ${new Date(found.validTo).toISOString()}` };
    if ('reason' in found.path) return { ok: false, reason: `the certificate "${commonName}" is ${found.path.reason}` };
    const invalidCa = found.path.path.find((link) => t < link.validFrom || t > link.validTo);
    if (invalidCa) return { ok: false, reason: `the issuing CA "${commonNameOf(invalidCa.ca.subject)}" of the certificate "${commonName}" is not valid at ${at.toISOString()}` };
    const issuingCa = found.path.path[0]!.ca;
    const caPurpose = purposeOfCa(issuingCa);
    if (separatePurposes && caPurpose && caPurpose !== purpose) {
      return { ok: false, reason: `the certificate "${commonName}" is issued by "${commonNameOf(issuingCa.subject)}", a CA for ${caPurpose === 'ap' ? 'access point' : 'SMP'} certificates` };
    }
    if (revocationCheck !== 'off') {
      const entry = revocation.get(cert.fingerprint256);
      if (!entry || entry.validUntil < t) {
        const why = revocationFailures.get(cert.fingerprint256);
        return { ok: false, reason: `the revocation status (${revocationCheck.toUpperCase()}) of "${commonName}" is not known${why ? `: ${why}` : ''}` };
      }
      if (entry.revoked) return { ok: false, reason: `the certificate "${commonName}" is ${entry.reason}` };
    }
    return { ok: true, commonName };
  }

  async function refreshRevocation(pem: string, at: Date): Promise<void> {
    if (revocationCheck === 'off') return;
    let cert: X509Certificate;
    try {
      cert = certificateOf(pem);
    } catch {
      return;
    }
    const cached = revocation.get(cert.fingerprint256);
    if (cached && cached.validUntil >= at.getTime()) return;
    const issuer = issuerOf(cert);
    if (!issuer) return; // verifyCertificate refuses it anyway
    try {
      const entry = revocationCheck === 'crl' ? await crlStatus(cert, issuer, at) : await ocspStatus(cert, issuer, at);
      revocation.set(cert.fingerprint256, entry);
      revocationFailures.delete(cert.fingerprint256);
      if (revocation.size > 10_000) revocation.delete(revocation.keys().next().value as string);
    } catch (err) {
      // the status stays unknown: verifyCertificate refuses the certificate, naming this reason
      revocationFailures.set(cert.fingerprint256, err instanceof Error ? err.message : String(err));
      if (revocationFailures.size > 10_000) revocationFailures.delete(revocationFailures.keys().next().value as string);
    }
  }

  return {
    caCertificatesPem: cas.map((c) => c.toString()),
    revocationCheck,
    verifyCertificate,
    refreshRevocation,
    async verifyCertificateOnline(pem, at, purpose) {
      await refreshRevocation(pem, at);
      return verifyCertificate(pem, at, purpose);
    },
  };
}

/** The service's configured access point: its settings, identity and trust store, loaded once at start. */
export interface PeppolAccessPoint {
  config: PeppolConfig & { smlZone: string; endpointUrl: string };
  identity: AccessPointIdentity;
  trust: PeppolTrust;
}

/**
 * Loads what is configured of the access point at start: a keystore or trust store that is set
 * but cannot be loaded is a ConfigError (one line, no secret). The access point exists only when
 * keystore, trust store, SML zone and endpoint URL are all set; `missing` names what is not.
 */
export function openPeppolAccessPoint(config: PeppolConfig, now: Date = new Date()): { accessPoint: PeppolAccessPoint | null; missing: string[] } {
  const identity = config.keystore ? loadAccessPointIdentity(config, now) : null;
  const trust = config.truststorePath ? loadPeppolTrust(config) : null;
  if (identity && trust) {
    const verdict = trust.verifyCertificate(identity.certificatePem, now, 'ap');
    if (!verdict.ok && trust.revocationCheck === 'off') {
      throw new ConfigError(`the access point certificate (${identity.commonName}) does not chain to PEPPOL_TRUSTSTORE: ${verdict.reason}`);
    }
  }
  const missing = peppolMissingSettings(config);
  if (missing.length > 0 || !identity || !trust || !config.smlZone || !config.endpointUrl) return { accessPoint: null, missing };
  return { accessPoint: { config: { ...config, smlZone: config.smlZone, endpointUrl: config.endpointUrl }, identity, trust }, missing };
}
