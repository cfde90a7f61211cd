/**
 * ZATCA's cryptographic stamp of a Saudi invoice (phase 2), as ZATCA's E-Invoice Security
 * Features Implementation Standards, its XML Implementation Standard and its published SDK define
 * it, given the EGS unit's key material and the signing time (pure: no clock, no I/O):
 *
 * - the invoice hash: SHA-256 (base64) of the C14N 1.1 form of the invoice without
 *   ext:UBLExtensions, cac:Signature and the QR AdditionalDocumentReference;
 * - the XAdES-BES enveloped signature in ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent/
 *   sig:UBLDocumentSignatures/sac:SignatureInformation/ds:Signature (Id "signature"), with two
 *   references: the invoice (three XPath transforms and C14N 1.1; digest = the invoice hash) and
 *   the xades:SignedProperties (SigningTime, SigningCertificate: certificate digest and issuer/serial);
 * - cac:Signature (urn:oasis:names:specification:ubl:signature:Invoice, …:dsig:enveloped:xades);
 * - the QR: TLV base64 with tags 1-5 (seller, VAT number, time, totals), 6 the invoice hash,
 *   7 the signature value, 8 the public key (DER), and for a simplified invoice 9 the
 *   certificate's signature (by ZATCA's CA).
 *
 * Where ZATCA's scheme is not plain XMLDSig, this follows ZATCA:
 * - SignatureValue is ECDSA-SHA256 over the invoice hash's 32 bytes, not over SignedInfo;
 * - the certificate digest is base64(hex(SHA-256(the certificate's base64 DER text)));
 * - the SignedProperties digest is base64(hex(SHA-256(the element's text exactly as written
 *   in the document))), the element carrying its own xades and ds namespace declarations.
 * The ext, sig, sac, sbc, ds and xades namespaces are declared inside ext:UBLExtensions, so
 * removing it leaves the rest of the document (and so the hash) as the generator wrote it.
 */
import { createHash, sign, verify, X509Certificate, type KeyObject } from 'node:crypto';
import { DOMParser, XMLSerializer, type Document, type Element, type Node } from '@xmldom/xmldom';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import { C14nCanonicalization } from 'xml-crypto';
import { decodeZatcaQr, type ZatcaStamper } from '../artifacts/zatca.js';

export const NS = {
  invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
  ext: 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2',
  sig: 'urn:oasis:names:specification:ubl:schema:xsd:CommonSignatureComponents-2',
  sac: 'urn:oasis:names:specification:ubl:schema:xsd:SignatureAggregateComponents-2',
  sbc: 'urn:oasis:names:specification:ubl:schema:xsd:SignatureBasicComponents-2',
  ds: 'http://www.w3.org/2000/09/xmldsig#',
  xades: 'http://uri.etsi.org/01903/v1.3.2#',
} as const;

const C14N11 = 'http://www.w3.org/2006/12/xml-c14n11';
const XPATH = 'http://www.w3.org/TR/1999/REC-xpath-19991116';
const ECDSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256';
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';
export const ZATCA_XPATH_TRANSFORMS = [
  'not(//ancestor-or-self::ext:UBLExtensions)',
  'not(//ancestor-or-self::cac:Signature)',
  "not(//ancestor-or-self::cac:AdditionalDocumentReference[cbc:ID='QR'])",
] as const;
export const UBL_SIGNATURE_ID = 'urn:oasis:names:specification:ubl:signature:Invoice';
export const UBL_SIGNATURE_METHOD = 'urn:oasis:names:specification:ubl:dsig:enveloped:xades';

export interface StampKey {
  privateKey: KeyObject;
  /** The CSID's certificate, base64 DER. */
  certificate: string;
}

export interface StampResult {
  xml: string;
  bytes: Buffer;
  invoiceHash: string;
  signatureValue: string;
  qr: string;
}

export class StampError extends Error {
  override readonly name = 'StampError';
}

/** The error code of a delivery attempt refused because the EGS unit's CSID is outside its validity. */
export const ZATCA_CSID_EXPIRED = 'ZATCA_CSID_EXPIRED';

export interface CsidValidityProblem {
  /** `expired`: after notAfter; `not_yet_valid`: before notBefore. */
  reason: 'expired' | 'not_yet_valid';
  notBefore: string;
  notAfter: string;
}

/**
 * Whether a CSID's certificate may sign at `at` (the caller's clock): null inside its validity
 * (notBefore ≤ at ≤ notAfter, as X.509 defines it), else why not with both instants (ISO).
 */
export function csidValidityProblem(certificate: { validFrom: string; validTo: string }, at: Date): CsidValidityProblem | null {
  const notBefore = new Date(certificate.validFrom);
  const notAfter = new Date(certificate.validTo);
  const t = at.getTime();
  if (t > notAfter.getTime()) return { reason: 'expired', notBefore: notBefore.toISOString(), notAfter: notAfter.toISOString() };
  if (t < notBefore.getTime()) return { reason: 'not_yet_valid', notBefore: notBefore.toISOString(), notAfter: notAfter.toISOString() };
  return null;
}

/**
 * Whether a CSID expiring at `notAfter` (ISO) is due for renewal at `at` within `withinDays`:
 * null when it expires later, else whether it has expired already and the whole days left
 * (0 on its last day, negative once expired).
 */
export function csidRenewalDue(notAfter: string, at: Date, withinDays: number): { expired: boolean; daysLeft: number } | null {
  const left = Date.parse(notAfter) - at.getTime();
  if (left > withinDays * 86_400_000) return null;
  return { expired: left < 0, daysLeft: Math.floor(left / 86_400_000) };
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest();
const hexBase64 = (data: string | Buffer) => Buffer.from(sha256(data).toString('hex'), 'utf8').toString('base64');

const parse = (xml: string): Document => {
  const errors: string[] = [];
  const doc = new DOMParser({ onError: (level, message) => { if (level !== 'warning') errors.push(message); } }).parseFromString(xml, 'text/xml');
  if (errors.length > 0 || !doc.documentElement) throw new StampError(`not well-formed XML: ${errors[0] ?? 'no root element'}`);
  return doc;
};

const children = (parent: Node, ns: string, local: string): Element[] => {
  const out: Element[] = [];
  for (let n = parent.firstChild; n; n = n.nextSibling) if (n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === local) out.push(n as Element);
  return out;
};
const textOf = (el: Element | undefined, ns: string, local: string) => (el ? children(el, ns, local)[0]?.textContent ?? null : null);

const isQrReference = (el: Element) => textOf(el, NS.cbc, 'ID')?.trim() === 'QR';

/** The invoice hash of a document (signed or not): base64 SHA-256 of its C14N form minus the stamp's parts. */
export function invoiceHashOf(xml: string | Document): string {
  const doc = typeof xml === 'string' ? parse(xml) : xml;
  const root = doc.documentElement!;
  // The three parts are taken out for the canonicalization and put back where they were.
  const removed: { el: Element; before: Node | null }[] = [];
  for (let n = root.firstChild; n; n = n.nextSibling) {
    if (n.nodeType !== 1) continue;
    const el = n as Element;
    const part = (el.namespaceURI === NS.ext && el.localName === 'UBLExtensions') || (el.namespaceURI === NS.cac && (el.localName === 'Signature' || (el.localName === 'AdditionalDocumentReference' && isQrReference(el))));
    if (part) removed.push({ el, before: el.nextSibling });
  }
  for (const { el } of removed) root.removeChild(el);
  try {
    // C14N 1.1 and 1.0 differ only on xml:id, xml:base and xml:* attribute inheritance, which an invoice never carries.
    const canonical = new C14nCanonicalization().process(root as unknown as globalThis.Node, {}) as string;
    return sha256(Buffer.from(canonical, 'utf8')).toString('base64');
  } finally {
    // Last first, so each one's next sibling is back in place before it.
    for (const { el, before } of removed.reverse()) root.insertBefore(el, before);
  }
}

/** TLV: tag, one-byte length, value (UTF-8 text or bytes). */
export function tlv(values: readonly (string | Buffer)[]): string {
  const parts: Buffer[] = [];
  values.forEach((value, i) => {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    if (bytes.length > 255) throw new StampError(`QR tag ${i + 1} is ${bytes.length} bytes; a tag holds at most 255`);
    parts.push(Buffer.from([i + 1, bytes.length]), bytes);
  });
  return Buffer.concat(parts).toString('base64');
}

/** The QR's tags as bytes (tags 8 and 9 are binary). */
export function decodeQrTags(base64: string): Map<number, Buffer> {
  const bytes = Buffer.from(base64, 'base64');
  const out = new Map<number, Buffer>();
  let i = 0;
  while (i + 2 <= bytes.length) {
    const len = bytes[i + 1]!;
    out.set(bytes[i]!, bytes.subarray(i + 2, i + 2 + len));
    i += 2 + len;
  }
  return out;
}

/** The certificate digest of xades:CertDigest as ZATCA computes it: base64 of the hex SHA-256 of the base64 DER text. */
export const certificateDigest = (certificateBase64: string) => hexBase64(certificateBase64);

/** RFC 4514 order (most specific first), as ZATCA's samples write X509IssuerName. */
export function issuerName(cert: X509Certificate): string {
  return cert.issuer.split('\n').reverse().join(', ');
}

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The xades:SignedProperties element as written into the document (and hashed as written),
 * laid out as ZATCA's SDK writes it.
 */
export function signedPropertiesXml(signingTime: string, certificateBase64: string, cert: X509Certificate): string {
  const ds = `xmlns:ds="${NS.ds}"`;
  const pad = (n: number) => ' '.repeat(n);
  return (
    `<xades:SignedProperties xmlns:xades="${NS.xades}" Id="xadesSignedProperties">\n` +
    `${pad(32)}<xades:SignedSignatureProperties>\n` +
    `${pad(36)}<xades:SigningTime>${escapeText(signingTime)}</xades:SigningTime>\n` +
    `${pad(36)}<xades:SigningCertificate>\n` +
    `${pad(40)}<xades:Cert>\n` +
    `${pad(44)}<xades:CertDigest>\n` +
    `${pad(48)}<ds:DigestMethod ${ds} Algorithm="${SHA256}"/>\n` +
    `${pad(48)}<ds:DigestValue ${ds}>${certificateDigest(certificateBase64)}</ds:DigestValue>\n` +
    `${pad(44)}</xades:CertDigest>\n` +
    `${pad(44)}<xades:IssuerSerial>\n` +
    `${pad(48)}<ds:X509IssuerName ${ds}>${escapeText(issuerName(cert))}</ds:X509IssuerName>\n` +
    `${pad(48)}<ds:X509SerialNumber ${ds}>${BigInt(`0x${cert.serialNumber}`).toString(10)}</ds:X509SerialNumber>\n` +
    `${pad(44)}</xades:IssuerSerial>\n` +
    `${pad(40)}</xades:Cert>\n` +
    `${pad(36)}</xades:SigningCertificate>\n` +
    `${pad(32)}</xades:SignedSignatureProperties>\n` +
    `${pad(28)}</xades:SignedProperties>`
  );
}

/** ZATCA's signing time: UTC, seconds, no zone designator. */
export const zatcaSigningTime = (at: Date | string) => new Date(at).toISOString().slice(0, 19);

function ublExtensionsXml(invoiceHash: string, signatureValue: string, certificateBase64: string, signedProperties: string): string {
  const transforms = ZATCA_XPATH_TRANSFORMS.map((x) => `<ds:Transform Algorithm="${XPATH}"><ds:XPath>${escapeText(x)}</ds:XPath></ds:Transform>`).join('');
  return (
    `<ext:UBLExtensions xmlns:ext="${NS.ext}"><ext:UBLExtension><ext:ExtensionURI>${UBL_SIGNATURE_METHOD}</ext:ExtensionURI><ext:ExtensionContent>` +
    `<sig:UBLDocumentSignatures xmlns:sig="${NS.sig}" xmlns:sac="${NS.sac}" xmlns:sbc="${NS.sbc}"><sac:SignatureInformation>` +
    `<cbc:ID>urn:oasis:names:specification:ubl:signature:1</cbc:ID><sbc:ReferencedSignatureID>${UBL_SIGNATURE_ID}</sbc:ReferencedSignatureID>` +
    `<ds:Signature xmlns:ds="${NS.ds}" Id="signature"><ds:SignedInfo>` +
    `<ds:CanonicalizationMethod Algorithm="${C14N11}"/><ds:SignatureMethod Algorithm="${ECDSA_SHA256}"/>` +
    `<ds:Reference Id="invoiceSignedData" URI=""><ds:Transforms>${transforms}<ds:Transform Algorithm="${C14N11}"/></ds:Transforms>` +
    `<ds:DigestMethod Algorithm="${SHA256}"/><ds:DigestValue>${invoiceHash}</ds:DigestValue></ds:Reference>` +
    `<ds:Reference Type="http://www.w3.org/2000/09/xmldsig#SignatureProperties" URI="#xadesSignedProperties">` +
    `<ds:DigestMethod Algorithm="${SHA256}"/><ds:DigestValue>${hexBase64(signedProperties)}</ds:DigestValue></ds:Reference>` +
    `</ds:SignedInfo><ds:SignatureValue>${signatureValue}</ds:SignatureValue>` +
    `<ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certificateBase64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo>` +
    `<ds:Object><xades:QualifyingProperties xmlns:xades="${NS.xades}" Target="signature">${signedProperties}</xades:QualifyingProperties></ds:Object>` +
    `</ds:Signature></sac:SignatureInformation></sig:UBLDocumentSignatures></ext:ExtensionContent></ext:UBLExtension></ext:UBLExtensions>`
  );
}

/** Whether the invoice is simplified (B2C): InvoiceTypeCode/@name starts 02. */
export function isSimplified(doc: Document): boolean {
  const code = children(doc.documentElement!, NS.cbc, 'InvoiceTypeCode')[0];
  return (code?.getAttribute('name') ?? '').startsWith('02');
}

/** The certificate's own signature (the CA's), the bytes of QR tag 9. */
export function certificateSignatureBytes(certificateDer: Buffer): Buffer {
  return Buffer.from(AsnConvert.parse(certificateDer, Certificate).signatureValue);
}

/**
 * The stamp of an invoice given its hash: the signature value, the ext:UBLExtensions markup
 * (declaring its namespaces but cbc, which the invoice root declares) and the QR with tags 1-9
 * (1-8 for a standard invoice). The generator calls it (generateInvoiceXml's `stamp`) once the
 * hash is known, so a stamped invoice costs no parse. `signingTime` is passed in.
 */
export function zatcaStamper(key: StampKey, signingTime: Date | string): ZatcaStamper {
  const cert = new X509Certificate(Buffer.from(key.certificate, 'base64'));
  const publicKeyDer = cert.publicKey.export({ type: 'spki', format: 'der' });
  const signedProperties = signedPropertiesXml(zatcaSigningTime(signingTime), key.certificate, cert);
  let certificateSignature: Buffer | null = null;
  return (invoiceHash, qrTags1to5, simplified) => {
    const signatureValue = sign('sha256', Buffer.from(invoiceHash, 'base64'), key.privateKey).toString('base64');
    const tags: (string | Buffer)[] = [...qrTags1to5.slice(0, 5), invoiceHash, signatureValue, publicKeyDer];
    if (simplified) tags.push((certificateSignature ??= certificateSignatureBytes(cert.raw)));
    return { ublExtensions: ublExtensionsXml(invoiceHash, signatureValue, key.certificate, signedProperties), qr: tlv(tags), signatureValue };
  };
}

/**
 * Stamps an unsigned ZATCA invoice given as text (one the generator wrote, with its QR of tags
 * 1-6): adds the signature, cac:Signature and the QR with tags 1-9 (1-8 for a standard invoice).
 * Parses the document; the generator's `stamp` does the same without parsing.
 */
export function stampInvoice(unsignedXml: string, key: StampKey, signingTime: Date | string): StampResult {
  const doc = parse(unsignedXml);
  const root = doc.documentElement!;
  if (root.namespaceURI !== NS.invoice) throw new StampError('a ZATCA stamp goes on a UBL Invoice');
  if (children(root, NS.ext, 'UBLExtensions').length > 0 || children(root, NS.cac, 'Signature').length > 0) throw new StampError('the invoice is stamped already');
  const invoiceHash = invoiceHashOf(doc);
  const references = children(root, NS.cac, 'AdditionalDocumentReference');
  const qrRef = references.find(isQrReference);
  const qrObject = qrRef ? children(children(qrRef, NS.cac, 'Attachment')[0]!, NS.cbc, 'EmbeddedDocumentBinaryObject')[0] : undefined;
  if (!qrRef || !qrObject) throw new StampError('the invoice has no QR reference to complete');
  const basic = decodeZatcaQr(qrObject.textContent ?? '');
  const stamped = zatcaStamper(key, signingTime)(invoiceHash, [1, 2, 3, 4, 5].map((t) => basic.get(t) ?? ''), isSimplified(doc));
  qrObject.textContent = stamped.qr;

  // cac:Signature after the document references (its place in the UBL sequence), before the parties.
  const signature = doc.createElementNS(NS.cac, 'cac:Signature');
  const id = doc.createElementNS(NS.cbc, 'cbc:ID');
  id.appendChild(doc.createTextNode(UBL_SIGNATURE_ID));
  const method = doc.createElementNS(NS.cbc, 'cbc:SignatureMethod');
  method.appendChild(doc.createTextNode(UBL_SIGNATURE_METHOD));
  signature.appendChild(id);
  signature.appendChild(method);
  root.insertBefore(signature, references[references.length - 1]!.nextSibling);

  // Parsed inside a wrapper that binds cbc as the invoice does, so the fragment declares nothing more.
  const wrapper = parse(`<w xmlns:cbc="${NS.cbc}">${stamped.ublExtensions}</w>`).documentElement!;
  root.insertBefore(doc.importNode(children(wrapper, NS.ext, 'UBLExtensions')[0]!, true), root.firstChild);

  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(root)}`;
  return { xml, bytes: Buffer.from(xml, 'utf8'), invoiceHash, signatureValue: stamped.signatureValue, qr: stamped.qr };
}

/** What a stamp check found wrong, by part. */
export const StampProblemCodes = {
  missing: 'ZATCA_STAMP_MISSING',
  xml: 'ZATCA_STAMP_XML',
  certificate: 'ZATCA_STAMP_CERTIFICATE',
  invoiceHash: 'ZATCA_STAMP_INVOICE_HASH',
  signature: 'ZATCA_STAMP_SIGNATURE',
  signedProperties: 'ZATCA_STAMP_SIGNED_PROPERTIES',
  certificateDigest: 'ZATCA_STAMP_CERTIFICATE_DIGEST',
  ublSignature: 'ZATCA_STAMP_UBL_SIGNATURE',
  qr: 'ZATCA_STAMP_QR',
} as const;

export interface StampProblem {
  code: (typeof StampProblemCodes)[keyof typeof StampProblemCodes];
  /** Where: the element or QR tag at fault. */
  path: string;
  message: string;
}

/**
 * Checks a stamped invoice the way ZATCA's validator does: the invoice hash (recomputed), the
 * signature over it with the certificate's key, the certificate digest, the SignedProperties
 * digest, cac:Signature, and QR tags 6-8 (9 for a simplified invoice). Empty when it holds.
 */
export function verifyStamp(xml: string): StampProblem[] {
  const problems: StampProblem[] = [];
  let doc: Document;
  try {
    doc = parse(xml);
  } catch (err) {
    return [{ code: StampProblemCodes.xml, path: '/', message: (err as Error).message }];
  }
  const root = doc.documentElement!;
  const dsSig = root.getElementsByTagNameNS(NS.ds, 'Signature')[0];
  if (!children(root, NS.ext, 'UBLExtensions')[0] || !dsSig) return [{ code: StampProblemCodes.missing, path: 'ext:UBLExtensions', message: 'the invoice carries no cryptographic stamp' }];
  const signedInfo = children(dsSig, NS.ds, 'SignedInfo')[0];
  const refs = signedInfo ? children(signedInfo, NS.ds, 'Reference') : [];
  const invoiceRef = refs.find((r) => r.getAttribute('URI') === '');
  const propsRef = refs.find((r) => r.getAttribute('URI') === '#xadesSignedProperties');
  const certText = dsSig.getElementsByTagNameNS(NS.ds, 'X509Certificate')[0]?.textContent?.replace(/\s/g, '') ?? '';
  let cert: X509Certificate | null = null;
  try {
    cert = new X509Certificate(Buffer.from(certText, 'base64'));
  } catch {
    problems.push({ code: StampProblemCodes.certificate, path: 'ds:KeyInfo/ds:X509Data/ds:X509Certificate', message: 'no readable certificate' });
  }
  const hash = invoiceHashOf(doc);
  const digest = textOf(invoiceRef, NS.ds, 'DigestValue');
  if (digest !== hash) problems.push({ code: StampProblemCodes.invoiceHash, path: "ds:Reference[@Id='invoiceSignedData']/ds:DigestValue", message: `the invoice hash is ${hash}, the signature names ${digest ?? 'none'}` });
  const signatureValue = (textOf(dsSig, NS.ds, 'SignatureValue') ?? '').replace(/\s/g, '');
  if (cert && !verify('sha256', Buffer.from(hash, 'base64'), cert.publicKey, Buffer.from(signatureValue, 'base64'))) {
    problems.push({ code: StampProblemCodes.signature, path: 'ds:SignatureValue', message: "the signature does not verify over the invoice hash with the certificate's key" });
  }
  const props = dsSig.getElementsByTagNameNS(NS.xades, 'SignedProperties')[0];
  if (!props) problems.push({ code: StampProblemCodes.signedProperties, path: 'xades:SignedProperties', message: 'no signed properties' });
  else {
    const written = xml.slice(xml.indexOf('<xades:SignedProperties'), xml.indexOf('</xades:SignedProperties>') + '</xades:SignedProperties>'.length);
    if (textOf(propsRef, NS.ds, 'DigestValue') !== hexBase64(written)) problems.push({ code: StampProblemCodes.signedProperties, path: "ds:Reference[@URI='#xadesSignedProperties']/ds:DigestValue", message: 'the signed properties do not match their digest' });
    const certDigest = props.getElementsByTagNameNS(NS.ds, 'DigestValue')[0]?.textContent ?? '';
    if (certDigest !== certificateDigest(certText)) problems.push({ code: StampProblemCodes.certificateDigest, path: 'xades:CertDigest/ds:DigestValue', message: 'the certificate digest does not match the certificate' });
  }
  const sigEl = children(root, NS.cac, 'Signature')[0];
  if (textOf(sigEl, NS.cbc, 'ID') !== UBL_SIGNATURE_ID || textOf(sigEl, NS.cbc, 'SignatureMethod') !== UBL_SIGNATURE_METHOD) {
    problems.push({ code: StampProblemCodes.ublSignature, path: 'cac:Signature', message: 'cac:Signature must name the invoice signature and the enveloped XAdES method' });
  }
  const qrRef = children(root, NS.cac, 'AdditionalDocumentReference').find(isQrReference);
  const qrText = qrRef ? (qrRef.getElementsByTagNameNS(NS.cbc, 'EmbeddedDocumentBinaryObject')[0]?.textContent ?? '') : '';
  const tags = decodeQrTags(qrText);
  const expectTag = (tag: number, value: Buffer | null, what: string) => {
    if (value && !tags.get(tag)?.equals(value)) problems.push({ code: StampProblemCodes.qr, path: `QR tag ${tag}`, message: `QR tag ${tag} is not ${what}` });
  };
  expectTag(6, Buffer.from(hash, 'utf8'), 'the invoice hash');
  expectTag(7, Buffer.from(signatureValue, 'utf8'), 'the signature value');
  if (cert) {
    expectTag(8, cert.publicKey.export({ type: 'spki', format: 'der' }), "the certificate's public key");
    if (isSimplified(doc)) expectTag(9, certificateSignatureBytes(cert.raw), "the certificate's signature");
  }
  return problems;
}
