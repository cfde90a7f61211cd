/**
 * Peppol discovery: from a receiver's participant identifier to its access point's AS4 endpoint.
 *
 * 1. SML (BDXL, U-NAPTR): the DNS name is
 *    `strip-trailing-"="(base32(sha256(lowercase(participant value)))) . participant scheme . SML zone`
 *    and its NAPTR records with flag "U" and service "Meta:SMP" give the SMP's URL (the regexp's
 *    replacement). No record (NXDOMAIN / no NAPTR): the participant is not registered.
 * 2. SMP (Peppol SMP 1.x): the ServiceGroup at `{smp}/{url-encoded scheme::value}` lists the
 *    document types the participant receives; the SignedServiceMetadata at
 *    `{smp}/{participant}/services/{url-encoded doctype scheme::value}` holds the processes and
 *    endpoints (document types matched as selectDocumentType says). Its XML signature (enveloping
 *    the whole document) is verified with xml-crypto, and the signing certificate must chain to
 *    the trust store as an SMP certificate. Only the signed content is read afterwards.
 * 3. The endpoint for the process with transport profile `peppol-transport-as4-v2_0`, active at
 *    the time (activation and expiration dates), whose certificate chains to the trust store as
 *    an access point certificate.
 *
 * Answers are cached (LRU, by key participant + document type + process) until the earliest of:
 * the endpoint's expiration, its certificate's or the SMP certificate's end of validity, and one
 * hour; "not found" answers for five minutes. Failures that are not answers (DNS or SMP
 * unreachable, bad signature, untrusted certificate) throw a PeppolDiscoveryError and are not cached.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { DOMParser, type Document as XmlDocument, type Element as XmlElement } from '@xmldom/xmldom';
import { LRUCache } from 'lru-cache';
import { base32 } from 'rfc4648';
import { SignedXml } from 'xml-crypto';
import * as xpath from 'xpath';
import { pemFromBase64Der, type PeppolTrust } from '../../../platform/peppol-pki.js';

export interface PeppolEndpoint {
  url: string;
  certificatePem: string;
  transportProfile: string;
  serviceActivation?: string;
  serviceExpiration?: string;
}

export type DiscoveryResult =
  | { found: true; endpoint: PeppolEndpoint }
  | { found: false; reason: 'PARTICIPANT_NOT_REGISTERED' | 'DOCUMENT_TYPE_NOT_SUPPORTED' | 'PROCESS_NOT_SUPPORTED' | 'TRANSPORT_NOT_SUPPORTED'; detail: string };

/** What a participant's SMP says it receives: per document type, the processes and their transport profiles. */
export type ParticipantServices =
  | { registered: false; detail: string; validUntil: string }
  | {
      registered: true;
      smpUrl: string;
      documentTypes: { documentTypeId: string; processes: { processId: string; transportProfiles: string[] }[] }[];
      /** Document types whose signed metadata could not be read (unsigned, untrusted, redirected): named, not guessed. */
      unreadable: { documentTypeId: string; reason: string }[];
      validUntil: string;
    };

export interface PeppolDiscovery {
  lookup(participant: { scheme: string; value: string }, documentTypeId: string, processId: string): Promise<DiscoveryResult>;
  /**
   * Every document type and process the participant's SMP lists (the service group, then each
   * type's signed metadata, at most MAX_LISTED_DOCUMENT_TYPES), cached like lookups: until the
   * earliest expiration of what it lists, at most an hour; "not registered" for five minutes.
   */
  participantServices?(participant: { scheme: string; value: string }): Promise<ParticipantServices>;
}

/** The most document types whose metadata a listing reads (an SMP may list hundreds). */
export const MAX_LISTED_DOCUMENT_TYPES = 50;

export type PeppolDiscoveryErrorCode =
  | 'SML_LOOKUP_FAILED'
  | 'SMP_UNREACHABLE'
  | 'SMP_ANSWER_INVALID'
  | 'SMP_SIGNATURE_INVALID'
  | 'SMP_CERTIFICATE_UNTRUSTED'
  | 'ENDPOINT_CERTIFICATE_UNTRUSTED';

/** Discovery could not give an answer. `transient`: the same lookup may succeed later unchanged (network). */
export class PeppolDiscoveryError extends Error {
  override readonly name = 'PeppolDiscoveryError';
  constructor(
    readonly code: PeppolDiscoveryErrorCode,
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

export const AS4_TRANSPORT_PROFILE = 'peppol-transport-as4-v2_0';
export const DEFAULT_PARTICIPANT_SCHEME = 'iso6523-actorid-upis';
export const DEFAULT_DOCUMENT_TYPE_SCHEME = 'busdox-docid-qns';
export const DEFAULT_PROCESS_SCHEME = 'cenbii-procid-ubl';
export const WILDCARD_DOCUMENT_TYPE_SCHEME = 'peppol-doctype-wildcard';
const DOCUMENT_TYPE_SCHEMES = [DEFAULT_DOCUMENT_TYPE_SCHEME, WILDCARD_DOCUMENT_TYPE_SCHEME];
const PROCESS_SCHEMES = ['cenbii-procid-ubl'];

const NS_DSIG = 'http://www.w3.org/2000/09/xmldsig#';
const NS_SMP = 'http://busdox.org/serviceMetadata/publishing/1.0/';
const NS_IDS = 'http://busdox.org/transport/identifiers/1.0/';
const NS_WSA = 'http://www.w3.org/2005/08/addressing';
const select = xpath.useNamespaces({ smp: NS_SMP, ids: NS_IDS, wsa: NS_WSA, ds: NS_DSIG });

const SMP_TIMEOUT_MS = 10_000;
const SMP_MAX_BYTES = 4 * 1024 * 1024;
const POSITIVE_TTL_MS = 3600_000;
const NEGATIVE_TTL_MS = 5 * 60_000;

/** The SML's DNS name of a participant (Peppol Policy for use of Identifiers, SML 1.3 BDXL). */
export function smlDnsName(participant: { scheme: string; value: string }, smlZone: string): string {
  const hash = createHash('sha256').update(participant.value.toLowerCase(), 'utf8').digest();
  return `${base32.stringify(hash, { pad: false }).toLowerCase()}.${participant.scheme.toLowerCase()}.${smlZone.replace(/\.$/, '')}`;
}

/** Splits "scheme::value" when it starts with one of the known schemes; else the default scheme. */
function schemed(id: string, schemes: string[], fallback: string): { scheme: string; value: string } {
  for (const s of schemes) {
    if (id.toLowerCase().startsWith(`${s}::`)) return { scheme: s, value: id.slice(s.length + 2) };
  }
  return { scheme: fallback, value: id };
}

/** Applies a U-NAPTR regexp field ("!^.*$!https://smp.example!") to the queried name (RFC 3402). */
function applyNaptrRegexp(regexp: string, name: string): string | null {
  if (regexp.length < 3) return null;
  const delim = regexp[0]!;
  const parts = regexp.slice(1).split(delim);
  if (parts.length !== 3) return null;
  const [pattern, replacement, flags] = parts as [string, string, string];
  let re: RegExp;
  try {
    re = new RegExp(pattern, flags.includes('i') ? 'i' : '');
  } catch {
    return null;
  }
  const m = re.exec(name);
  if (!m) return null;
  return replacement.replace(/\\(\d)/g, (_, d: string) => m[Number(d)] ?? '');
}

function parseXml(xml: string, what: string): XmlDocument {
  try {
    return new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') throw new Error(message);
      },
    }).parseFromString(xml, 'text/xml');
  } catch (err) {
    throw new PeppolDiscoveryError('SMP_ANSWER_INVALID', `the SMP's ${what} is not well-formed XML: ${(err as Error).message.split('\n')[0]}`, false);
  }
}

function text(node: unknown): string {
  return node && typeof node === 'object' && 'textContent' in node ? String((node as { textContent: string | null }).textContent ?? '').trim() : '';
}

function attr(node: unknown, name: string): string {
  return node && typeof node === 'object' && 'getAttribute' in node ? ((node as XmlElement).getAttribute(name) ?? '') : '';
}

function nodes(expr: string, node: unknown): XmlElement[] {
  const r = select(expr, node as Node);
  return Array.isArray(r) ? (r as unknown as XmlElement[]) : [];
}

function sameId(a: { scheme: string; value: string }, b: { scheme: string; value: string }, caseInsensitiveValue: boolean): boolean {
  if (a.scheme.toLowerCase() !== b.scheme.toLowerCase()) return false;
  return caseInsensitiveValue ? a.value.toLowerCase() === b.value.toLowerCase() : a.value === b.value;
}

/**
 * The document type to ask the SMP for, among those the participant lists (Policy for use of
 * Identifiers 4.3): `busdox-docid-qns` matches exactly; `peppol-doctype-wildcard` (PINT) matches the
 * exact customization, then the customization followed by "*", then with its last "@…" part taken
 * off followed by "*", and so on. A document type given without a scheme is tried as
 * `busdox-docid-qns` first, then as `peppol-doctype-wildcard`; one given with a scheme only so.
 */
function selectDocumentType(
  listed: { scheme: string; value: string }[],
  requested: { scheme: string; value: string },
  busdoxOnly: boolean,
): { scheme: string; value: string } | null {
  const has = (scheme: string, value: string) => listed.find((l) => l.scheme.toLowerCase() === scheme && l.value === value) ?? null;
  if (requested.scheme === DEFAULT_DOCUMENT_TYPE_SCHEME) {
    const exact = has(DEFAULT_DOCUMENT_TYPE_SCHEME, requested.value);
    if (exact || busdoxOnly) return exact;
  }
  // <root namespace>::<local name>##<customization>::<version>
  const m = /^(.+?::[^#]+)##(.+)::([^:]+)$/.exec(requested.value);
  if (!m) return null;
  const [, root, customizationRaw, version] = m as unknown as [string, string, string, string];
  let customization = customizationRaw.replace(/\*$/, '');
  if (customization.includes('*')) return null;
  const wildcard = WILDCARD_DOCUMENT_TYPE_SCHEME;
  const exact = has(wildcard, `${root}##${customization}::${version}`);
  if (exact) return exact;
  for (;;) {
    const best = has(wildcard, `${root}##${customization}*::${version}`);
    if (best) return best;
    const at = customization.lastIndexOf('@');
    if (at < 0) return null;
    customization = customization.slice(0, at);
  }
}

interface Cached {
  result: DiscoveryResult;
  expiresAt: number;
}

export function createPeppolDiscovery(opts: { smlZone: string; dnsServers?: string[]; trust: PeppolTrust; now: () => Date; cacheMax?: number }): PeppolDiscovery {
  const resolver = new Resolver({ timeout: 5000, tries: 2 });
  if (opts.dnsServers?.length) resolver.setServers(opts.dnsServers);
  const zone = opts.smlZone.replace(/\.$/, '');
  const cache = new LRUCache<string, Cached>({ max: opts.cacheMax ?? 10_000, ttl: POSITIVE_TTL_MS });
  const inFlight = new Map<string, Promise<DiscoveryResult>>();

  async function smpUrlOf(participant: { scheme: string; value: string }): Promise<string | null> {
    const name = smlDnsName(participant, zone);
    let records: Awaited<ReturnType<Resolver['resolveNaptr']>>;
    try {
      records = await resolver.resolveNaptr(name);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA') return null;
      throw new PeppolDiscoveryError('SML_LOOKUP_FAILED', `the SML lookup of ${name} failed (${code ?? (err as Error).message})`, true);
    }
    const candidates = records
      .filter((r) => r.flags.toUpperCase() === 'U' && r.service.toLowerCase() === 'meta:smp')
      .sort((a, b) => a.order - b.order || a.preference - b.preference);
    for (const r of candidates) {
      const url = applyNaptrRegexp(r.regexp, name);
      if (url && /^https?:\/\/[^\s]+$/i.test(url)) return url.replace(/\/+$/, '');
    }
    return null;
  }

  async function get(url: string): Promise<{ status: number; body: string }> {
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(SMP_TIMEOUT_MS), headers: { accept: 'application/xml, text/xml' } });
    } catch (err) {
      throw new PeppolDiscoveryError('SMP_UNREACHABLE', `the SMP at ${url} could not be reached (${(err as Error).message})`, true);
    }
    const length = Number(res.headers.get('content-length') ?? '0');
    if (length > SMP_MAX_BYTES) throw new PeppolDiscoveryError('SMP_ANSWER_INVALID', `the SMP answer at ${url} is larger than ${SMP_MAX_BYTES} bytes`, false);
    const body = Buffer.from(await res.arrayBuffer());
    if (body.length > SMP_MAX_BYTES) throw new PeppolDiscoveryError('SMP_ANSWER_INVALID', `the SMP answer at ${url} is larger than ${SMP_MAX_BYTES} bytes`, false);
    if (res.status >= 500 || res.status === 429) throw new PeppolDiscoveryError('SMP_UNREACHABLE', `the SMP at ${url} answered ${res.status}`, true);
    return { status: res.status, body: body.toString('utf8') };
  }

  /** Verifies the SignedServiceMetadata's signature and signer; returns the signed document only. */
  async function verifiedMetadata(xml: string, url: string): Promise<{ doc: XmlDocument; smpCertificateValidTo: number }> {
    const doc = parseXml(xml, 'service metadata');
    const signatures = nodes('/smp:SignedServiceMetadata/ds:Signature', doc);
    if (signatures.length !== 1) throw new PeppolDiscoveryError('SMP_SIGNATURE_INVALID', `the service metadata at ${url} is not signed (or signed more than once)`, false);
    const signature = signatures[0]!;
    const certB64 = text(nodes('ds:KeyInfo/ds:X509Data/ds:X509Certificate', signature)[0]);
    if (!certB64) throw new PeppolDiscoveryError('SMP_SIGNATURE_INVALID', `the signature of the service metadata at ${url} carries no X.509 certificate`, false);
    const certificatePem = pemFromBase64Der(certB64);
    let smpCert: X509Certificate;
    try {
      smpCert = new X509Certificate(certificatePem);
    } catch {
      throw new PeppolDiscoveryError('SMP_SIGNATURE_INVALID', `the signing certificate of the service metadata at ${url} cannot be read`, false);
    }
    const verdict = await opts.trust.verifyCertificateOnline(certificatePem, opts.now(), 'smp');
    if (!verdict.ok) throw new PeppolDiscoveryError('SMP_CERTIFICATE_UNTRUSTED', `the SMP certificate is not trusted: ${verdict.reason}`, false);
    const sig = new SignedXml({ publicCert: certificatePem });
    let valid = false;
    try {
      sig.loadSignature(signature as unknown as Node);
      valid = sig.checkSignature(xml);
    } catch (err) {
      throw new PeppolDiscoveryError('SMP_SIGNATURE_INVALID', `the signature of the service metadata at ${url} cannot be checked: ${(err as Error).message}`, false);
    }
    if (!valid) throw new PeppolDiscoveryError('SMP_SIGNATURE_INVALID', `the signature of the service metadata at ${url} does not verify`, false);
    const references = sig.getReferences();
    const signed = sig.getSignedReferences();
    if (references.length !== 1 || (references[0]!.uri ?? '') !== '' || signed.length !== 1) {
      throw new PeppolDiscoveryError('SMP_SIGNATURE_INVALID', `the signature of the service metadata at ${url} does not cover the whole document`, false);
    }
    return { doc: parseXml(signed[0]!, 'signed service metadata'), smpCertificateValidTo: new Date(smpCert.validTo).getTime() };
  }

  async function discover(participant: { scheme: string; value: string }, documentTypeId: string, processId: string): Promise<{ result: DiscoveryResult; ttlMs: number }> {
    const now = opts.now();
    const notFound = (reason: Extract<DiscoveryResult, { found: false }>['reason'], detail: string) => ({ result: { found: false as const, reason, detail }, ttlMs: NEGATIVE_TTL_MS });
    const participantText = `${participant.scheme}::${participant.value}`;
    const smp = await smpUrlOf(participant);
    if (!smp) return notFound('PARTICIPANT_NOT_REGISTERED', `${participantText} is not registered in the SML ${zone}`);

    const participantPath = encodeURIComponent(participantText);
    const group = await get(`${smp}/${participantPath}`);
    if (group.status === 404) return notFound('PARTICIPANT_NOT_REGISTERED', `${participantText} is registered in the SML but unknown to its SMP ${smp}`);
    if (group.status !== 200) throw new PeppolDiscoveryError('SMP_ANSWER_INVALID', `the SMP ${smp} answered ${group.status} for the service group of ${participantText}`, false);
    const groupDoc = parseXml(group.body, 'service group');
    const requested = schemed(documentTypeId, DOCUMENT_TYPE_SCHEMES, DEFAULT_DOCUMENT_TYPE_SCHEME);
    const listedTypes = nodes('/smp:ServiceGroup/smp:ServiceMetadataReferenceCollection/smp:ServiceMetadataReference', groupDoc).flatMap((ref) => {
      const href = attr(ref, 'href');
      const at = href.toLowerCase().lastIndexOf('/services/');
      if (at < 0) return [];
      try {
        return [schemed(decodeURIComponent(href.slice(at + '/services/'.length)), DOCUMENT_TYPE_SCHEMES, DEFAULT_DOCUMENT_TYPE_SCHEME)];
      } catch {
        return [];
      }
    });
    const docType = selectDocumentType(listedTypes, requested, documentTypeId.toLowerCase().startsWith(`${DEFAULT_DOCUMENT_TYPE_SCHEME}::`));
    const docTypeText = `${(docType ?? requested).scheme}::${(docType ?? requested).value}`;
    if (!docType) return notFound('DOCUMENT_TYPE_NOT_SUPPORTED', `${participantText} does not receive the document type ${docTypeText}`);

    const metadataUrl = `${smp}/${participantPath}/services/${encodeURIComponent(docTypeText)}`;
    const metadata = await get(metadataUrl);
    if (metadata.status === 404) return notFound('DOCUMENT_TYPE_NOT_SUPPORTED', `${participantText} does not receive the document type ${docTypeText} (no service metadata)`);
    if (metadata.status !== 200) throw new PeppolDiscoveryError('SMP_ANSWER_INVALID', `the SMP answered ${metadata.status} at ${metadataUrl}`, false);
    const { doc, smpCertificateValidTo } = await verifiedMetadata(metadata.body, metadataUrl);

    const info = nodes('/smp:SignedServiceMetadata/smp:ServiceMetadata/smp:ServiceInformation', doc)[0];
    if (!info) {
      const redirect = nodes('/smp:SignedServiceMetadata/smp:ServiceMetadata/smp:Redirect', doc)[0];
      throw new PeppolDiscoveryError('SMP_ANSWER_INVALID', redirect ? `the SMP redirects ${participantText} to ${attr(redirect, 'href')}; SMP redirects are not followed` : `the service metadata at ${metadataUrl} has no ServiceInformation`, false);
    }
    const idOf = (el: XmlElement | undefined) => ({ scheme: attr(el, 'scheme'), value: text(el) });
    if (!sameId(idOf(nodes('ids:ParticipantIdentifier', info)[0]), participant, true) || !sameId(idOf(nodes('ids:DocumentIdentifier', info)[0]), docType, false)) {
      throw new PeppolDiscoveryError('SMP_ANSWER_INVALID', `the service metadata at ${metadataUrl} is about another participant or document type`, false);
    }
    const process = schemed(processId, PROCESS_SCHEMES, DEFAULT_PROCESS_SCHEME);
    const processText = `${process.scheme}::${process.value}`;
    const proc = nodes('smp:ProcessList/smp:Process', info).find((p) => sameId(idOf(nodes('ids:ProcessIdentifier', p)[0]), process, false));
    if (!proc) return notFound('PROCESS_NOT_SUPPORTED', `${participantText} receives ${docTypeText} but not in the process ${processText}`);
    const endpoints = nodes('smp:ServiceEndpointList/smp:Endpoint', proc).filter((e) => attr(e, 'transportProfile') === AS4_TRANSPORT_PROFILE);
    if (endpoints.length === 0) return notFound('TRANSPORT_NOT_SUPPORTED', `${participantText} has no ${AS4_TRANSPORT_PROFILE} endpoint for ${docTypeText} in ${processText}`);

    const t = now.getTime();
    const reasons: string[] = [];
    let nextActivation = Infinity;
    for (const e of endpoints) {
      const url = text(nodes('wsa:EndpointReference/wsa:Address', e)[0]);
      const activation = text(nodes('smp:ServiceActivationDate', e)[0]) || undefined;
      const expiration = text(nodes('smp:ServiceExpirationDate', e)[0]) || undefined;
      const activationAt = activation ? Date.parse(activation) : -Infinity;
      const expirationAt = expiration ? Date.parse(expiration) : Infinity;
      if (Number.isNaN(activationAt) || Number.isNaN(expirationAt)) {
        reasons.push(`the endpoint ${url} has an unreadable activation or expiration date`);
        continue;
      }
      if (activationAt > t) {
        reasons.push(`the endpoint ${url} is active only from ${activation}`);
        nextActivation = Math.min(nextActivation, activationAt);
        continue;
      }
      if (expirationAt <= t) {
        reasons.push(`the endpoint ${url} expired on ${expiration}`);
        continue;
      }
      if (!/^https?:\/\/\S+$/i.test(url)) {
        reasons.push(`the endpoint address "${url}" is not an http(s) URL`);
        continue;
      }
      const certificatePem = pemFromBase64Der(text(nodes('smp:Certificate', e)[0]));
      const verdict = await opts.trust.verifyCertificateOnline(certificatePem, now, 'ap');
      if (!verdict.ok) throw new PeppolDiscoveryError('ENDPOINT_CERTIFICATE_UNTRUSTED', `the certificate of the endpoint ${url} is not trusted: ${verdict.reason}`, false);
      const endpointCertValidTo = new Date(new X509Certificate(certificatePem).validTo).getTime();
      const endpoint: PeppolEndpoint = { url, certificatePem, transportProfile: AS4_TRANSPORT_PROFILE };
      if (activation) endpoint.serviceActivation = activation;
      if (expiration) endpoint.serviceExpiration = expiration;
      const until = Math.min(t + POSITIVE_TTL_MS, expirationAt, endpointCertValidTo, smpCertificateValidTo);
      return { result: { found: true, endpoint }, ttlMs: Math.max(1, until - t) };
    }
    const r = notFound('TRANSPORT_NOT_SUPPORTED', `${participantText} has no usable ${AS4_TRANSPORT_PROFILE} endpoint for ${docTypeText}: ${reasons.join('; ')}`);
    return { ...r, ttlMs: Math.max(1, Math.min(r.ttlMs, nextActivation - t)) };
  }

  const servicesCache = new LRUCache<string, { result: ParticipantServices; expiresAt: number }>({ max: opts.cacheMax ?? 10_000, ttl: POSITIVE_TTL_MS });
  const servicesInFlight = new Map<string, Promise<ParticipantServices>>();

  async function listServices(participant: { scheme: string; value: string }): Promise<ParticipantServices> {
    const t = opts.now().getTime();
    const until = (ms: number) => new Date(t + ms).toISOString();
    const participantText = `${participant.scheme}::${participant.value}`;
    const smp = await smpUrlOf(participant);
    if (!smp) return { registered: false, detail: `${participantText} is not registered in the SML ${zone}`, validUntil: until(NEGATIVE_TTL_MS) };
    const participantPath = encodeURIComponent(participantText);
    const group = await get(`${smp}/${participantPath}`);
    if (group.status === 404) return { registered: false, detail: `${participantText} is registered in the SML but unknown to its SMP ${smp}`, validUntil: until(NEGATIVE_TTL_MS) };
    if (group.status !== 200) throw new PeppolDiscoveryError('SMP_ANSWER_INVALID', `the SMP ${smp} answered ${group.status} for the service group of ${participantText}`, false);
    const groupDoc = parseXml(group.body, 'service group');
    const hrefs = nodes('/smp:ServiceGroup/smp:ServiceMetadataReferenceCollection/smp:ServiceMetadataReference', groupDoc)
      .map((ref) => attr(ref, 'href'))
      .filter((href) => href.toLowerCase().includes('/services/'))
      .slice(0, MAX_LISTED_DOCUMENT_TYPES);
    let validTo = t + POSITIVE_TTL_MS;
    const documentTypes: Extract<ParticipantServices, { registered: true }>['documentTypes'] = [];
    const unreadable: { documentTypeId: string; reason: string }[] = [];
    for (const href of hrefs) {
      let docTypeText: string;
      try {
        docTypeText = decodeURIComponent(href.slice(href.toLowerCase().lastIndexOf('/services/') + '/services/'.length));
      } catch {
        continue;
      }
      const metadataUrl = `${smp}/${participantPath}/services/${encodeURIComponent(docTypeText)}`;
      try {
        const metadata = await get(metadataUrl);
        if (metadata.status !== 200) throw new PeppolDiscoveryError('SMP_ANSWER_INVALID', `the SMP answered ${metadata.status} at ${metadataUrl}`, false);
        const { doc, smpCertificateValidTo } = await verifiedMetadata(metadata.body, metadataUrl);
        validTo = Math.min(validTo, smpCertificateValidTo);
        const info = nodes('/smp:SignedServiceMetadata/smp:ServiceMetadata/smp:ServiceInformation', doc)[0];
        if (!info) throw new PeppolDiscoveryError('SMP_ANSWER_INVALID', `the service metadata at ${metadataUrl} has no ServiceInformation (redirects are not followed)`, false);
        const processes = nodes('smp:ProcessList/smp:Process', info).map((p) => {
          const id = nodes('ids:ProcessIdentifier', p)[0];
          const endpoints = nodes('smp:ServiceEndpointList/smp:Endpoint', p).filter((e) => {
            const expiration = text(nodes('smp:ServiceExpirationDate', e)[0]);
            const activation = text(nodes('smp:ServiceActivationDate', e)[0]);
            if (expiration && Date.parse(expiration) <= t) return false;
            if (activation && Date.parse(activation) > t) return false;
            if (expiration) validTo = Math.min(validTo, Date.parse(expiration));
            return true;
          });
          return { processId: `${attr(id, 'scheme') || DEFAULT_PROCESS_SCHEME}::${text(id)}`, transportProfiles: [...new Set(endpoints.map((e) => attr(e, 'transportProfile')))] };
        });
        documentTypes.push({ documentTypeId: docTypeText, processes });
      } catch (err) {
        if (err instanceof PeppolDiscoveryError && !err.transient) unreadable.push({ documentTypeId: docTypeText, reason: err.message });
        else throw err;
      }
    }
    return { registered: true, smpUrl: smp, documentTypes, unreadable, validUntil: new Date(Math.max(t + 1, validTo)).toISOString() };
  }

  return {
    async participantServices(participant) {
      const key = `${participant.scheme.toLowerCase()}::${participant.value.toLowerCase()}`;
      const hit = servicesCache.get(key);
      if (hit && hit.expiresAt > opts.now().getTime()) return hit.result;
      const running = servicesInFlight.get(key);
      if (running) return running;
      const run = listServices(participant)
        .then((result) => {
          const ttl = Math.max(1, Date.parse(result.validUntil) - opts.now().getTime());
          servicesCache.set(key, { result, expiresAt: opts.now().getTime() + ttl }, { ttl });
          return result;
        })
        .finally(() => servicesInFlight.delete(key));
      servicesInFlight.set(key, run);
      return run;
    },
    async lookup(participant, documentTypeId, processId) {
      const key = `${participant.scheme.toLowerCase()}::${participant.value.toLowerCase()}\n${documentTypeId}\n${processId}`;
      const hit = cache.get(key);
      if (hit && hit.expiresAt > opts.now().getTime()) return hit.result;
      const running = inFlight.get(key);
      if (running) return running;
      const run = discover(participant, documentTypeId, processId)
        .then(({ result, ttlMs }) => {
          cache.set(key, { result, expiresAt: opts.now().getTime() + ttlMs }, { ttl: ttlMs });
          return result;
        })
        .finally(() => inFlight.delete(key));
      inFlight.set(key, run);
      return run;
    },
  };
}
