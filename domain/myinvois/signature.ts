/**
 * The MyInvois document signature (LHDNM's "Document Signature Creation" guide, SDK 1.0, for UBL 2.1
 * XML documents of version 1.1, which the signed document declares in `cbc:InvoiceTypeCode
 * listVersionID`; version 1.0 is the unsigned one): an enveloped XAdES-BES signature in
 * `ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent/sig:UBLDocumentSignatures`, and the
 * `cac:Signature` that names it.
 *
 * - DocDigest: SHA-256 over the canonical (C14N 1.1) document without `ext:UBLExtensions` and
 *   `cac:Signature`, base64 (the reference with URI "" whose transforms remove exactly those).
 * - CertDigest: SHA-256 of the signing certificate's DER, base64; with the issuer name (RFC 4514
 *   order) and the serial number (decimal) in `xades:SigningCertificate/xades:Cert`.
 * - PropsDigest: SHA-256 over the canonical `xades:SignedProperties` (signing time and certificate).
 * - Sig: RSA-SHA256 with the taxpayer's private key over the canonical `ds:SignedInfo`, which holds
 *   both digests (the XML Signature rule, which `xmlsec1 --verify` and the authority check).
 *
 * The XPath transforms are written as `not(ancestor-or-self::…)`: evaluated per node, as the XPath
 * filter of XML Signature is, they select the document without the two elements. (The guide's
 * sample writes `not(//ancestor-or-self::…)`, which a conforming XPath evaluator reads as "no
 * node at all"; the authority computes DocDigest by removing the elements, which gives the same
 * value as the form used here.)
 *
 * Canonicalization is xml-crypto's inclusive C14N, declared as C14N 1.1: the two differ only for
 * `xml:id`, `xml:base` and other `xml:` attributes inherited into a document subset, which a MyInvois
 * document does not carry (the tests verify every signature with xmlsec1's own C14N 1.1).
 * Pure: the key, the certificate and the signing time are given.
 */
import { createHash, createPrivateKey, createSign, X509Certificate, type KeyObject } from 'node:crypto';
import { DOMParser, XMLSerializer, type Document, type Element } from '@xmldom/xmldom';
import { C14nCanonicalization } from 'xml-crypto';
import { UBL_NS } from '../artifacts/xml.js';

export const NS = {
  ds: 'http://www.w3.org/2000/09/xmldsig#',
  xades: 'http://uri.etsi.org/01903/v1.3.2#',
  sig: 'urn:oasis:names:specification:ubl:schema:xsd:CommonSignatureComponents-2',
  sac: 'urn:oasis:names:specification:ubl:schema:xsd:SignatureAggregateComponents-2',
  sbc: 'urn:oasis:names:specification:ubl:schema:xsd:SignatureBasicComponents-2',
  xmlns: 'http://www.w3.org/2000/xmlns/',
  ...UBL_NS,
} as const;

export const ALG = {
  c14n11: 'http://www.w3.org/2006/12/xml-c14n11',
  rsaSha256: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  xpath: 'http://www.w3.org/TR/1999/REC-xpath-19991116',
  signedProperties: 'http://uri.etsi.org/01903/v1.3.2#SignedProperties',
} as const;

export const SIGNATURE_IDS = {
  signature: 'signature',
  docReference: 'id-doc-signed-data',
  signedProperties: 'id-xades-signed-props',
  ublSignature: 'urn:oasis:names:specification:ubl:signature:Invoice',
  ublSignatureInformation: 'urn:oasis:names:specification:ubl:signature:1',
  method: 'urn:oasis:names:specification:ubl:dsig:enveloped:xades',
} as const;

/** The MyInvois document version of a signed document (`cbc:InvoiceTypeCode/@listVersionID`). */
export const SIGNED_DOCUMENT_VERSION = '1.1';

export class MyInvoisSignatureError extends Error {
  override readonly name = 'MyInvoisSignatureError';
}

/** Namespace declarations sorted by code point, as C14N says (xml-crypto sorts with localeCompare). */
class C14n extends C14nCanonicalization {
  override nsCompare(a: { prefix: string }, b: { prefix: string }): number {
    return a.prefix === b.prefix ? 0 : a.prefix < b.prefix ? -1 : 1;
  }
}
const C14N = new C14n();

/** The namespaces in scope at `el` from its ancestors (nearest binding of each prefix), for a subtree's C14N. */
function ancestorNamespaces(el: Element): { prefix: string; namespaceURI: string }[] {
  const seen = new Map<string, string>();
  for (let p = el.parentNode as Element | null; p && p.nodeType === 1; p = p.parentNode as Element | null) {
    for (let i = 0; i < p.attributes.length; i++) {
      const a = p.attributes.item(i)!;
      const prefix = a.name === 'xmlns' ? '' : a.prefix === 'xmlns' ? a.localName! : null;
      if (prefix !== null && !seen.has(prefix)) seen.set(prefix, a.value);
    }
  }
  return [...seen].filter(([, uri]) => uri !== '').map(([prefix, namespaceURI]) => ({ prefix, namespaceURI }));
}

/** Inclusive C14N of an element in its document (the namespaces of its ancestors included). */
export function canonical(el: Element): string {
  return C14N.process(el as never, { ancestorNamespaces: ancestorNamespaces(el) });
}

export const sha256b64 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('base64');

/** Parses XML text, turning xmldom's errors into an exception. */
export function parseXml(text: string): Document {
  let failure: string | null = null;
  let doc: Document;
  try {
    doc = new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') failure ??= String(message);
      },
    }).parseFromString(text, 'application/xml');
  } catch (err) {
    failure ??= (err as Error).message;
    throw new MyInvoisSignatureError(`the document is not well-formed XML: ${String(failure).split('\n')[0]}`);
  }
  if (failure) throw new MyInvoisSignatureError(`the document is not well-formed XML: ${String(failure).split('\n')[0]}`);
  if (!doc.documentElement) throw new MyInvoisSignatureError('the document has no root element');
  return doc;
}

const children = (el: Element, ns: string, local: string): Element[] => {
  const out: Element[] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) if (c.nodeType === 1 && (c as Element).namespaceURI === ns && (c as Element).localName === local) out.push(c as Element);
  return out;
};

/** The root without its UBLExtensions and cac:Signature children: what DocDigest is taken over. */
export function documentDigest(doc: Document): string {
  const root = doc.documentElement!;
  const removed = [...children(root, NS.ext, 'UBLExtensions'), ...children(root, NS.cac, 'Signature')];
  if (removed.length === 0) return sha256b64(C14N.process(root as never, {}));
  const copy = root.cloneNode(true) as Element;
  for (const el of [...children(copy, NS.ext, 'UBLExtensions'), ...children(copy, NS.cac, 'Signature')]) copy.removeChild(el);
  return sha256b64(C14N.process(copy as never, {}));
}

/** The certificate facts the signed properties carry. */
export function certificateFacts(certificatePem: string): { der: Buffer; digest: string; issuerName: string; serialNumber: string } {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certificatePem);
  } catch (err) {
    throw new MyInvoisSignatureError(`the signing certificate cannot be read: ${(err as Error).message}`);
  }
  return {
    der: cert.raw,
    digest: sha256b64(cert.raw),
    // Node lists the issuer's attributes in the certificate's order, one a line; RFC 4514 reverses them.
    issuerName: cert.issuer.split('\n').reverse().join(', '),
    serialNumber: BigInt(`0x${cert.serialNumber}`).toString(10),
  };
}

const keys = new Map<string, KeyObject>();
function privateKeyOf(pem: string): KeyObject {
  let k = keys.get(pem);
  if (!k) {
    try {
      k = createPrivateKey(pem);
    } catch (err) {
      throw new MyInvoisSignatureError(`the signing key cannot be read: ${(err as Error).message}`);
    }
    if (k.asymmetricKeyType !== 'rsa') throw new MyInvoisSignatureError(`the signing key is ${String(k.asymmetricKeyType)}, MyInvois takes RSA`);
    if (keys.size > 100) keys.clear();
    keys.set(pem, k);
  }
  return k;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The UBLExtensions block, with DocDigest and the certificate facts filled in (PropsDigest and Sig later). */
function extensionsMarkup(f: { docDigest: string; certBase64: string; certDigest: string; issuerName: string; serialNumber: string; signingTime: string }): string {
  return (
    `<ext:UBLExtensions><ext:UBLExtension><ext:ExtensionURI>${SIGNATURE_IDS.method}</ext:ExtensionURI><ext:ExtensionContent>` +
    `<sig:UBLDocumentSignatures xmlns:sac="${NS.sac}" xmlns:sbc="${NS.sbc}" xmlns:sig="${NS.sig}"><sac:SignatureInformation>` +
    `<cbc:ID>${SIGNATURE_IDS.ublSignatureInformation}</cbc:ID><sbc:ReferencedSignatureID>${SIGNATURE_IDS.ublSignature}</sbc:ReferencedSignatureID>` +
    `<ds:Signature xmlns:ds="${NS.ds}" Id="${SIGNATURE_IDS.signature}"><ds:SignedInfo>` +
    `<ds:CanonicalizationMethod Algorithm="${ALG.c14n11}"></ds:CanonicalizationMethod><ds:SignatureMethod Algorithm="${ALG.rsaSha256}"></ds:SignatureMethod>` +
    `<ds:Reference Id="${SIGNATURE_IDS.docReference}" URI=""><ds:Transforms>` +
    `<ds:Transform Algorithm="${ALG.xpath}"><ds:XPath>not(ancestor-or-self::ext:UBLExtensions)</ds:XPath></ds:Transform>` +
    `<ds:Transform Algorithm="${ALG.xpath}"><ds:XPath>not(ancestor-or-self::cac:Signature)</ds:XPath></ds:Transform>` +
    `<ds:Transform Algorithm="${ALG.c14n11}"></ds:Transform></ds:Transforms>` +
    `<ds:DigestMethod Algorithm="${ALG.sha256}"></ds:DigestMethod><ds:DigestValue>${f.docDigest}</ds:DigestValue></ds:Reference>` +
    `<ds:Reference Type="${ALG.signedProperties}" URI="#${SIGNATURE_IDS.signedProperties}">` +
    `<ds:DigestMethod Algorithm="${ALG.sha256}"></ds:DigestMethod><ds:DigestValue></ds:DigestValue></ds:Reference>` +
    `</ds:SignedInfo><ds:SignatureValue></ds:SignatureValue>` +
    `<ds:KeyInfo><ds:X509Data><ds:X509Certificate>${f.certBase64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo>` +
    `<ds:Object><xades:QualifyingProperties xmlns:xades="${NS.xades}" Target="${SIGNATURE_IDS.signature}">` +
    `<xades:SignedProperties Id="${SIGNATURE_IDS.signedProperties}"><xades:SignedSignatureProperties>` +
    `<xades:SigningTime>${f.signingTime}</xades:SigningTime><xades:SigningCertificate><xades:Cert><xades:CertDigest>` +
    `<ds:DigestMethod Algorithm="${ALG.sha256}"></ds:DigestMethod><ds:DigestValue>${f.certDigest}</ds:DigestValue></xades:CertDigest>` +
    `<xades:IssuerSerial><ds:X509IssuerName>${esc(f.issuerName)}</ds:X509IssuerName><ds:X509SerialNumber>${f.serialNumber}</ds:X509SerialNumber></xades:IssuerSerial>` +
    `</xades:Cert></xades:SigningCertificate></xades:SignedSignatureProperties></xades:SignedProperties>` +
    `</xades:QualifyingProperties></ds:Object></ds:Signature></sac:SignatureInformation></sig:UBLDocumentSignatures>` +
    `</ext:ExtensionContent></ext:UBLExtension></ext:UBLExtensions>`
  );
}

export interface SignedDocument {
  xml: string;
  bytes: Buffer;
  docDigest: string;
  /** SHA-256 of the signed bytes, hex: the `documentHash` of the submission. */
  documentHash: string;
}

const first = (doc: Document | Element, ns: string, local: string): Element => {
  const el = doc.getElementsByTagNameNS(ns, local).item(0);
  if (!el) throw new MyInvoisSignatureError(`no ${local} element`);
  return el;
};

/**
 * Signs a MyInvois UBL document (an Invoice, as every MyInvois document type is): replaces any
 * UBLExtensions and cac:Signature it has, and returns the signed document's text and bytes.
 * `signingTime`: UTC, ISO 8601 without fractions (e.g. 2024-07-23T15:14:54Z).
 */
export function signMyInvoisDocument(input: { xml: string | Buffer; privateKeyPem: string; certificatePem: string; signingTime: string }): SignedDocument {
  const doc = parseXml(typeof input.xml === 'string' ? input.xml : input.xml.toString('utf8'));
  const root = doc.documentElement!;
  if (root.namespaceURI !== NS.invoice || root.localName !== 'Invoice') throw new MyInvoisSignatureError(`a MyInvois document is a UBL Invoice, not ${root.tagName}`);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(input.signingTime)) throw new MyInvoisSignatureError(`the signing time must read YYYY-MM-DDThh:mm:ssZ, got "${input.signingTime}"`);
  const key = privateKeyOf(input.privateKeyPem);
  const cert = certificateFacts(input.certificatePem);
  for (const el of [...children(root, NS.ext, 'UBLExtensions'), ...children(root, NS.cac, 'Signature')]) root.removeChild(el);
  // A signed MyInvois document is of document version 1.1 (version 1.0 is the unsigned one).
  const typeCode = children(root, NS.cbc, 'InvoiceTypeCode')[0];
  if (!typeCode) throw new MyInvoisSignatureError('the document has no cbc:InvoiceTypeCode');
  typeCode.setAttribute('listVersionID', SIGNED_DOCUMENT_VERSION);
  if (!root.hasAttribute('xmlns:ext')) root.setAttributeNS(NS.xmlns, 'xmlns:ext', NS.ext);
  if (!root.hasAttribute('xmlns:cac')) root.setAttributeNS(NS.xmlns, 'xmlns:cac', NS.cac);
  if (!root.hasAttribute('xmlns:cbc')) root.setAttributeNS(NS.xmlns, 'xmlns:cbc', NS.cbc);
  const docDigest = documentDigest(doc);

  // cac:Signature: after the document references, before the supplier (UBL 2.1 Invoice sequence).
  const signature = doc.createElementNS(NS.cac, 'cac:Signature');
  const id = doc.createElementNS(NS.cbc, 'cbc:ID');
  id.appendChild(doc.createTextNode(SIGNATURE_IDS.ublSignature));
  const method = doc.createElementNS(NS.cbc, 'cbc:SignatureMethod');
  method.appendChild(doc.createTextNode(SIGNATURE_IDS.method));
  signature.appendChild(id);
  signature.appendChild(method);
  const supplier = children(root, NS.cac, 'AccountingSupplierParty')[0];
  if (!supplier) throw new MyInvoisSignatureError('the document has no cac:AccountingSupplierParty');
  root.insertBefore(signature, supplier);

  // The UBLExtensions block, parsed with the root's namespaces in scope and put first.
  const markup = extensionsMarkup({
    docDigest,
    certBase64: cert.der.toString('base64'),
    certDigest: cert.digest,
    issuerName: cert.issuerName,
    serialNumber: cert.serialNumber,
    signingTime: input.signingTime,
  });
  const wrapper = parseXml(`<w xmlns="${NS.invoice}" xmlns:cac="${NS.cac}" xmlns:cbc="${NS.cbc}" xmlns:ext="${NS.ext}">${markup}</w>`).documentElement!;
  const extensions = doc.importNode(wrapper.firstChild!, true);
  root.insertBefore(extensions, root.firstChild);

  const signedProperties = first(doc, NS.xades, 'SignedProperties');
  const signedInfo = first(doc, NS.ds, 'SignedInfo');
  const propsReference = signedInfo.getElementsByTagNameNS(NS.ds, 'Reference').item(1)!;
  first(propsReference, NS.ds, 'DigestValue').appendChild(doc.createTextNode(sha256b64(canonical(signedProperties))));
  const value = createSign('RSA-SHA256').update(canonical(signedInfo)).sign(key, 'base64');
  first(doc, NS.ds, 'SignatureValue').appendChild(doc.createTextNode(value));

  const xml = `<?xml version="1.0" encoding="UTF-8"?>${new XMLSerializer().serializeToString(root)}`;
  const bytes = Buffer.from(xml, 'utf8');
  return { xml, bytes, docDigest, documentHash: createHash('sha256').update(bytes).digest('hex') };
}
