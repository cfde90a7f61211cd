/**
 * WS-Security for Peppol AS4 (the profile's algorithms only): XML signature RSA-SHA256 with
 * SHA-256 digests and exclusive canonicalization over references to elements (by wsu:Id) and to
 * MIME attachments (the SwA Attachment-Content-Signature-Transform: the attachment's octets);
 * attachment encryption AES-128-GCM (12-byte IV, 16-byte tag, as xmlenc 1.1 says) with the key
 * transported by RSA-OAEP (xmlenc 1.1, SHA-256 digest, MGF1 with SHA-256) to the receiver's
 * certificate. Canonicalization is xml-crypto's; the parts the sending side writes itself (its
 * eb:Messaging, the empty Body, the SignedInfo) are written in their canonical form and digested
 * or signed as they stand (test/peppol/as4-canonical.test.ts proves the forms identical to
 * xml-crypto's). The primitives are node:crypto's.
 */
import type { Document, Element, Node } from '@xmldom/xmldom';
import { createCipheriv, createDecipheriv, createHash, createPrivateKey, createSign, createVerify, privateDecrypt, publicEncrypt, randomBytes, constants, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { ExclusiveCanonicalization } from 'xml-crypto';
import { c14nAttr, NS } from '../../../domain/peppol/ebms.js';
import { certificateOf } from '../../../platform/peppol-pki.js';

export const ALG = {
  excC14n: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  rsaSha256: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  attachmentContentSignature: 'http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#Attachment-Content-Signature-Transform',
  attachmentCiphertext: 'http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#Attachment-Ciphertext-Transform',
  attachmentContentOnly: 'http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#Attachment-Content-Only',
  aes128Gcm: 'http://www.w3.org/2009/xmlenc11#aes128-gcm',
  rsaOaepXenc11: 'http://www.w3.org/2009/xmlenc11#rsa-oaep',
  mgf1Sha256: 'http://www.w3.org/2009/xmlenc11#mgf1sha256',
  x509v3: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3',
  base64Binary: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary',
  encryptedKeyToken: 'http://docs.oasis-open.org/wss/oasis-wss-soap-message-security-1.1#EncryptedKey',
} as const;

/** A WS-Security failure (answered with EBMS:0101/0102/0103 by the receiving side). */
export class WssError extends Error {
  override readonly name = 'WssError';
  constructor(
    readonly kind: 'FAILED_AUTHENTICATION' | 'FAILED_DECRYPTION' | 'POLICY_NONCOMPLIANCE',
    message: string,
  ) {
    super(message);
  }
}

/** The namespaces in scope on an element's ancestors (for an InclusiveNamespaces prefix list). */
function ancestorNamespaces(el: Element): { prefix: string; namespaceURI: string }[] {
  const out: { prefix: string; namespaceURI: string }[] = [];
  const seen = new Set<string>();
  for (let n = el.parentNode; n && n.nodeType === 1; n = n.parentNode) {
    const attrs = (n as Element).attributes;
    for (let i = 0; i < attrs.length; i++) {
      const a = attrs.item(i)!;
      if (a.prefix === 'xmlns' && !seen.has(a.localName!)) {
        seen.add(a.localName!);
        out.push({ prefix: a.localName!, namespaceURI: a.value });
      }
    }
  }
  return out;
}

/**
 * xml-crypto's exclusive canonicalization, with namespace declarations ordered by code point as the
 * C14N specification says (xml-crypto 6 orders them with localeCompare, which puts `ns6` before
 * `S12`: a digest that other implementations, phase4's Santuario among them, do not reproduce).
 */
class ExcC14n extends ExclusiveCanonicalization {
  override nsCompare(a: { prefix: string }, b: { prefix: string }): number {
    return a.prefix === b.prefix ? 0 : a.prefix < b.prefix ? -1 : 1;
  }
}
const EXC_C14N = new ExcC14n();

/** Exclusive XML canonicalization of an element (without comments). */
export function excC14n(el: Element, prefixList: readonly string[] = []): string {
  return EXC_C14N.process(el as never, {
    inclusiveNamespacesPrefixList: [...prefixList],
    ancestorNamespaces: prefixList.length ? ancestorNamespaces(el) : [],
  });
}

/** Parsed keys by their PEM text (parsing a PEM costs more than the RSA operation); bounded. */
const privateKeys = new LRUCache<string, KeyObject>({ max: 100 });
const publicKeys = new LRUCache<string, KeyObject>({ max: 1000 });
const remember = (cache: LRUCache<string, KeyObject>, pem: string, make: () => KeyObject): KeyObject => {
  let v = cache.get(pem);
  if (!v) {
    v = make();
    cache.set(pem, v);
  }
  return v;
};
export const privateKeyOf = (pem: string): KeyObject => remember(privateKeys, pem, () => createPrivateKey(pem));
export const certificatePublicKeyOf = (pem: string): KeyObject => remember(publicKeys, pem, () => certificateOf(pem).publicKey);

export const sha256b64 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('base64');

export const pemBody = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
export const pemOfBase64Der = (b64: string) => `-----BEGIN CERTIFICATE-----\n${(b64.replace(/\s+/g, '').match(/.{1,64}/g) ?? []).join('\n')}\n-----END CERTIFICATE-----\n`;

/** The id an element is referenced by (wsu:Id, else Id). */
export const idOf = (el: Element): string | null => el.getAttributeNS(NS.wsu, 'Id') || el.getAttribute('Id') || null;

/** Walks the document's elements in document order (a plain tree walk: no live node list to build) until `visit` returns true. */
function walkElements(doc: Document, visit: (el: Element) => boolean | void): void {
  const root = doc.documentElement;
  let n: Node | null = root;
  while (n) {
    if (n.nodeType === 1 && visit(n as Element)) return;
    if (n.firstChild) {
      n = n.firstChild;
      continue;
    }
    while (n && n !== root && !n.nextSibling) n = n.parentNode;
    n = n && n !== root ? n.nextSibling : null;
  }
}

/**
 * Every id of the document with its first element in document order: one walk for every look-up
 * of a message (the decryption's EncryptedData, the signature's references and its token), which
 * `indexIds` builds once for both.
 */
export type IdIndex = ReadonlyMap<string, Element>;

export function indexIds(doc: Document): IdIndex {
  const out = new Map<string, Element>();
  walkElements(doc, (el) => {
    // Only elements with attributes can carry an id (most in a SOAP header have none).
    if (el.attributes.length === 0) return;
    const id = idOf(el);
    if (id !== null && !out.has(id)) out.set(id, el);
  });
  return out;
}

// ---- signing ------------------------------------------------------------------------------

export interface ReferenceToSign {
  /** `#<wsu:Id>` of an element, or `cid:<Content-ID>` of an attachment. */
  uri: string;
  /**
   * The element (canonicalized), the canonical form of an element this code wrote itself in that
   * form (`{ canonical }`, digested as it stands), or the attachment's octets.
   */
  target: Element | { canonical: string } | Uint8Array;
}

/** An empty element as sent (`<x/>`) or as exclusive C14N writes it (`<x></x>`). */
const empty = (name: string, attrs: string, canonical: boolean) => (canonical ? `<${name}${attrs}></${name}>` : `<${name}${attrs}/>`);

function referenceXml(uri: string, digest: string, attachment: boolean, canonical = false): string {
  const transform = empty('ds:Transform', ` Algorithm="${attachment ? ALG.attachmentContentSignature : ALG.excC14n}"`, canonical);
  return (
    `<ds:Reference URI="${c14nAttr(uri)}"><ds:Transforms>${transform}</ds:Transforms>${empty('ds:DigestMethod', ` Algorithm="${ALG.sha256}"`, canonical)}` +
    `<ds:DigestValue>${digest}</ds:DigestValue></ds:Reference>`
  );
}

/**
 * The ds:SignedInfo over the references: as sent inside ds:Signature (`ds` declared there), or
 * standalone in exclusive C14N form (what is signed; written directly, never parsed back:
 * test/peppol/as4-canonical.test.ts proves it byte-identical to xml-crypto's exclusive C14N of
 * the sent form).
 */
function signedInfoXml(references: readonly { uri: string; digest: string; attachment: boolean }[], canonical: boolean): string {
  return (
    (canonical ? `<ds:SignedInfo xmlns:ds="${NS.ds}">` : `<ds:SignedInfo>`) +
    empty('ds:CanonicalizationMethod', ` Algorithm="${ALG.excC14n}"`, canonical) +
    empty('ds:SignatureMethod', ` Algorithm="${ALG.rsaSha256}"`, canonical) +
    references.map((r) => referenceXml(r.uri, r.digest, r.attachment, canonical)).join('') +
    `</ds:SignedInfo>`
  );
}

const isElement = (t: ReferenceToSign['target']): t is Element => typeof (t as Element).nodeType === 'number';
const digestOf = (t: ReferenceToSign['target']): string =>
  t instanceof Uint8Array ? sha256b64(t) : isElement(t) ? sha256b64(excC14n(t)) : sha256b64(t.canonical);

/**
 * A ds:Signature over the references, signed with the private key; its KeyInfo points at the
 * BinarySecurityToken `bstId` holding the signer's certificate. Returns the signature's XML, the
 * canonical SignedInfo that was signed, and the references as they are written (the receiver's
 * receipt repeats them).
 */
export function signReferences(
  refs: readonly ReferenceToSign[],
  privateKeyPem: string,
  bstId: string,
  sigId: string,
): { xml: string; signedInfoCanonical: string; references: { uri: string; digest: string; xml: string }[] } {
  const references = refs.map((r) => ({ uri: r.uri, digest: digestOf(r.target), attachment: r.target instanceof Uint8Array }));
  const canonical = signedInfoXml(references, true);
  const value = createSign('RSA-SHA256').update(canonical).sign(privateKeyOf(privateKeyPem), 'base64');
  const xml =
    `<ds:Signature xmlns:ds="${NS.ds}" Id="${sigId}">` +
    signedInfoXml(references, false) +
    `<ds:SignatureValue>${value}</ds:SignatureValue>` +
    `<ds:KeyInfo><wsse:SecurityTokenReference><wsse:Reference URI="#${bstId}" ValueType="${ALG.x509v3}"/></wsse:SecurityTokenReference></ds:KeyInfo>` +
    `</ds:Signature>`;
  // The references as the receiver sees them inside the envelope (ds declared on each).
  return {
    xml,
    signedInfoCanonical: canonical,
    references: references.map((r) => ({ uri: r.uri, digest: r.digest, xml: referenceXml(r.uri, r.digest, r.attachment).replace('<ds:Reference ', `<ds:Reference xmlns:ds="${NS.ds}" `) })),
  };
}

export const bstXml = (id: string, certificatePem: string) =>
  `<wsse:BinarySecurityToken EncodingType="${ALG.base64Binary}" ValueType="${ALG.x509v3}" wsu:Id="${id}">${pemBody(certificatePem)}</wsse:BinarySecurityToken>`;

// ---- verifying ----------------------------------------------------------------------------

const dsKids = (e: Element | null, local: string): Element[] => {
  const out: Element[] = [];
  for (let n = e?.firstChild; n; n = n.nextSibling) if (n.nodeType === 1 && (n as Element).localName === local && (n as Element).namespaceURI === NS.ds) out.push(n as Element);
  return out;
};
const prefixListOf = (transformOrMethod: Element): string[] => {
  const inc = transformOrMethod.getElementsByTagNameNS(NS.ec, 'InclusiveNamespaces').item(0);
  return (inc?.getAttribute('PrefixList') ?? '').split(/\s+/).filter((p) => p !== '');
};

export interface VerifiedSignature {
  /** The signer's certificate (PEM), taken from the BinarySecurityToken the signature names. */
  certificatePem: string;
  /** Every ds:Reference, canonicalized (what a receipt's non-repudiation information repeats). */
  references: { uri: string; digest: string; xml: string }[];
  /** The ids of the signed elements. */
  signedIds: Set<string>;
}

/**
 * A verified reference whose canonical form is made on first use, by one getter shared by all of
 * them. A getter written in an object literal is a new closure per object, and V8 gives each such
 * object a map of its own, held from old space until a full collection: through it every
 * message's whole tree survived the young generation's collections and was promoted. The element
 * sits under a symbol, which a structured clone (the worker pool's answer) leaves out; `xml` is an
 * own enumerable property, which it copies.
 */
const REFERENCE = Symbol('ds:Reference');
const CANONICAL = Symbol('canonical ds:Reference');
type VerifiedReference = VerifiedSignature['references'][number] & { [REFERENCE]: Element; [CANONICAL]: string | undefined };
const LAZY_XML: PropertyDescriptor = {
  get(this: VerifiedReference): string {
    return (this[CANONICAL] ??= excC14n(this[REFERENCE]));
  },
  enumerable: true,
  configurable: true,
};

/**
 * Verifies a ds:Signature of a WS-Security header: each reference's digest (elements by id,
 * attachments by Content-ID through `attachment`) and the signature value with the certificate
 * of the BinarySecurityToken its KeyInfo names. Only the Peppol profile's algorithms pass.
 */
export function verifySignature(doc: Document, signature: Element, attachment: (cid: string) => Uint8Array | null, byId: IdIndex = indexIds(doc)): VerifiedSignature {
  const signedInfo = dsKids(signature, 'SignedInfo')[0];
  if (!signedInfo) throw new WssError('FAILED_AUTHENTICATION', 'the signature has no SignedInfo');
  const c14nMethod = dsKids(signedInfo, 'CanonicalizationMethod')[0];
  if (c14nMethod?.getAttribute('Algorithm') !== ALG.excC14n) throw new WssError('POLICY_NONCOMPLIANCE', `canonicalization ${c14nMethod?.getAttribute('Algorithm') ?? '(none)'} is not exclusive C14N`);
  const sigMethod = dsKids(signedInfo, 'SignatureMethod')[0]?.getAttribute('Algorithm');
  if (sigMethod !== ALG.rsaSha256) throw new WssError('POLICY_NONCOMPLIANCE', `signature method ${sigMethod ?? '(none)'} is not RSA-SHA256`);
  const references: VerifiedSignature['references'] = [];
  const signedIds = new Set<string>();
  for (const ref of dsKids(signedInfo, 'Reference')) {
    const uri = ref.getAttribute('URI') ?? '';
    const digestMethod = dsKids(ref, 'DigestMethod')[0]?.getAttribute('Algorithm');
    if (digestMethod !== ALG.sha256) throw new WssError('POLICY_NONCOMPLIANCE', `digest method ${digestMethod ?? '(none)'} of ${uri} is not SHA-256`);
    const expected = (dsKids(ref, 'DigestValue')[0]?.textContent ?? '').replace(/\s+/g, '');
    const transforms = dsKids(dsKids(ref, 'Transforms')[0] ?? null, 'Transform');
    let actual: string;
    if (uri.startsWith('cid:')) {
      if (transforms.length !== 1 || transforms[0]!.getAttribute('Algorithm') !== ALG.attachmentContentSignature) {
        throw new WssError('POLICY_NONCOMPLIANCE', `the attachment reference ${uri} does not use the Attachment-Content-Signature-Transform`);
      }
      const bytes = attachment(uri.slice(4));
      if (!bytes) throw new WssError('FAILED_AUTHENTICATION', `the signed attachment ${uri} is not in the message`);
      actual = sha256b64(bytes);
    } else if (uri.startsWith('#')) {
      const target = byId.get(uri.slice(1)) ?? null;
      if (!target) throw new WssError('FAILED_AUTHENTICATION', `the signed element ${uri} is not in the message`);
      if (transforms.length !== 1 || transforms[0]!.getAttribute('Algorithm') !== ALG.excC14n) throw new WssError('POLICY_NONCOMPLIANCE', `the reference ${uri} is not transformed by exclusive C14N alone`);
      actual = sha256b64(excC14n(target, prefixListOf(transforms[0]!)));
      signedIds.add(uri.slice(1));
    } else {
      throw new WssError('POLICY_NONCOMPLIANCE', `unsupported reference URI ${uri || '(empty)'}`);
    }
    if (actual !== expected) throw new WssError('FAILED_AUTHENTICATION', `the digest of ${uri} does not match: the message was changed after signing`);
    // The canonical reference only when asked (the receiving side copies it into its receipt).
    references.push(Object.defineProperty({ uri, digest: expected, [REFERENCE]: ref, [CANONICAL]: undefined }, 'xml', LAZY_XML) as VerifiedReference);
  }
  // The signer's certificate: the BinarySecurityToken named by the KeyInfo.
  const tokenRef = signature.getElementsByTagNameNS(NS.wsse, 'Reference').item(0)?.getAttribute('URI');
  const bst = tokenRef?.startsWith('#') ? (byId.get(tokenRef.slice(1)) ?? null) : null;
  if (!bst || bst.localName !== 'BinarySecurityToken') throw new WssError('FAILED_AUTHENTICATION', 'the signature does not name a BinarySecurityToken with the signing certificate');
  const certificatePem = pemOfBase64Der(bst.textContent ?? '');
  let publicKey: KeyObject;
  try {
    publicKey = certificatePublicKeyOf(certificatePem);
  } catch {
    throw new WssError('FAILED_AUTHENTICATION', 'the signing certificate cannot be read');
  }
  const canonical = excC14n(signedInfo, prefixListOf(c14nMethod));
  const value = (dsKids(signature, 'SignatureValue')[0]?.textContent ?? '').replace(/\s+/g, '');
  if (!createVerify('RSA-SHA256').update(canonical).verify(publicKey, value, 'base64')) {
    throw new WssError('FAILED_AUTHENTICATION', 'the signature value does not verify with the signing certificate');
  }
  return { certificatePem, references, signedIds };
}

// ---- encryption ---------------------------------------------------------------------------

/** AES-128-GCM: IV (12 bytes) ‖ ciphertext ‖ tag (16 bytes). */
export function encryptAttachment(plain: Uint8Array): { key: Buffer; cipher: Buffer } {
  const key = randomBytes(16);
  const iv = randomBytes(12);
  const c = createCipheriv('aes-128-gcm', key, iv);
  const body = Buffer.concat([c.update(plain), c.final()]);
  return { key, cipher: Buffer.concat([iv, body, c.getAuthTag()]) };
}

export function decryptAttachment(key: Buffer, cipher: Uint8Array): Buffer {
  if (key.length !== 16) throw new WssError('FAILED_DECRYPTION', `the content key has ${key.length} bytes; AES-128 needs 16`);
  if (cipher.byteLength < 28) throw new WssError('FAILED_DECRYPTION', 'the encrypted attachment is too short');
  const buf = Buffer.from(cipher.buffer, cipher.byteOffset, cipher.byteLength);
  const d = createDecipheriv('aes-128-gcm', key, buf.subarray(0, 12));
  d.setAuthTag(buf.subarray(buf.length - 16));
  try {
    return Buffer.concat([d.update(buf.subarray(12, buf.length - 16)), d.final()]);
  } catch {
    throw new WssError('FAILED_DECRYPTION', 'the attachment does not decrypt (authentication tag mismatch)');
  }
}

/** RSA-OAEP with SHA-256 and MGF1-SHA-256 (node's oaepHash sets both). */
export const wrapKey = (key: Buffer, receiverCertificatePem: string) =>
  publicEncrypt({ key: certificatePublicKeyOf(receiverCertificatePem), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, key);

export function unwrapKey(wrapped: Buffer, privateKeyPem: string): Buffer {
  try {
    return privateDecrypt({ key: privateKeyOf(privateKeyPem), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, wrapped);
  } catch {
    throw new WssError('FAILED_DECRYPTION', 'the content key does not decrypt with this access point key (encrypted for another certificate?)');
  }
}

/** The EncryptedKey (to the receiver's BinarySecurityToken) and the EncryptedData of one attachment. */
export function encryptionXml(o: { wrappedKey: Buffer; receiverBstId: string; encryptedKeyId: string; encryptedDataId: string; contentId: string; mimeType: string }): string {
  return (
    `<xenc:EncryptedKey xmlns:xenc="${NS.xenc}" Id="${o.encryptedKeyId}">` +
    `<xenc:EncryptionMethod Algorithm="${ALG.rsaOaepXenc11}"><ds:DigestMethod xmlns:ds="${NS.ds}" Algorithm="${ALG.sha256}"/><xenc11:MGF xmlns:xenc11="${NS.xenc11}" Algorithm="${ALG.mgf1Sha256}"/></xenc:EncryptionMethod>` +
    `<ds:KeyInfo xmlns:ds="${NS.ds}"><wsse:SecurityTokenReference><wsse:Reference URI="#${o.receiverBstId}" ValueType="${ALG.x509v3}"/></wsse:SecurityTokenReference></ds:KeyInfo>` +
    `<xenc:CipherData><xenc:CipherValue>${o.wrappedKey.toString('base64')}</xenc:CipherValue></xenc:CipherData>` +
    `<xenc:ReferenceList><xenc:DataReference URI="#${o.encryptedDataId}"/></xenc:ReferenceList>` +
    `</xenc:EncryptedKey>` +
    `<xenc:EncryptedData xmlns:xenc="${NS.xenc}" Id="${o.encryptedDataId}" MimeType="${o.mimeType}" Type="${ALG.attachmentContentOnly}">` +
    `<xenc:EncryptionMethod Algorithm="${ALG.aes128Gcm}"/>` +
    `<ds:KeyInfo xmlns:ds="${NS.ds}"><wsse:SecurityTokenReference xmlns:wsse11="${NS.wsse11}" wsse11:TokenType="${ALG.encryptedKeyToken}"><wsse:Reference URI="#${o.encryptedKeyId}"/></wsse:SecurityTokenReference></ds:KeyInfo>` +
    `<xenc:CipherData><xenc:CipherReference URI="cid:${o.contentId}"><xenc:Transforms><ds:Transform xmlns:ds="${NS.ds}" Algorithm="${ALG.attachmentCiphertext}"/></xenc:Transforms></xenc:CipherReference></xenc:CipherData>` +
    `</xenc:EncryptedData>`
  );
}

/**
 * Decrypts the attachments of a Security header: every EncryptedKey (RSA-OAEP/SHA-256/MGF1-SHA-256
 * only) opened with the private key, and the EncryptedData it lists (AES-128-GCM over a
 * `cid:` attachment). Returns the plain attachments by Content-ID, with their MIME types.
 */
export function decryptAttachments(
  doc: Document,
  security: Element,
  privateKeyPem: string,
  cipherOf: (cid: string) => Uint8Array | null,
  byId: IdIndex = indexIds(doc),
): Map<string, { bytes: Buffer; mimeType: string | null }> {
  const out = new Map<string, { bytes: Buffer; mimeType: string | null }>();
  const keys = security.getElementsByTagNameNS(NS.xenc, 'EncryptedKey');
  for (let i = 0; i < keys.length; i++) {
    const ek = keys.item(i)!;
    const method = ek.getElementsByTagNameNS(NS.xenc, 'EncryptionMethod').item(0);
    const digest = method?.getElementsByTagNameNS(NS.ds, 'DigestMethod').item(0)?.getAttribute('Algorithm');
    const mgf = method?.getElementsByTagNameNS(NS.xenc11, 'MGF').item(0)?.getAttribute('Algorithm');
    if (method?.getAttribute('Algorithm') !== ALG.rsaOaepXenc11 || digest !== ALG.sha256 || mgf !== ALG.mgf1Sha256) {
      throw new WssError('POLICY_NONCOMPLIANCE', 'key transport must be RSA-OAEP (xmlenc 1.1) with SHA-256 and MGF1-SHA-256');
    }
    const cipherValue = ek.getElementsByTagNameNS(NS.xenc, 'CipherValue').item(0)?.textContent ?? '';
    const key = unwrapKey(Buffer.from(cipherValue.replace(/\s+/g, ''), 'base64'), privateKeyPem);
    const dataRefs = ek.getElementsByTagNameNS(NS.xenc, 'DataReference');
    for (let j = 0; j < dataRefs.length; j++) {
      const id = (dataRefs.item(j)!.getAttribute('URI') ?? '').replace(/^#/, '');
      const ed = byId.get(id) ?? null;
      if (!ed || ed.localName !== 'EncryptedData') throw new WssError('FAILED_DECRYPTION', `the encrypted data #${id} is not in the message`);
      const alg = ed.getElementsByTagNameNS(NS.xenc, 'EncryptionMethod').item(0)?.getAttribute('Algorithm');
      if (alg !== ALG.aes128Gcm) throw new WssError('POLICY_NONCOMPLIANCE', `content encryption ${alg ?? '(none)'} is not AES-128-GCM`);
      const uri = ed.getElementsByTagNameNS(NS.xenc, 'CipherReference').item(0)?.getAttribute('URI') ?? '';
      if (!uri.startsWith('cid:')) throw new WssError('FAILED_DECRYPTION', 'only encrypted attachments are accepted (CipherReference to a cid:)');
      const cid = uri.slice(4);
      const cipher = cipherOf(cid);
      if (!cipher) throw new WssError('FAILED_DECRYPTION', `the encrypted attachment ${uri} is not in the message`);
      out.set(cid, { bytes: decryptAttachment(key, cipher), mimeType: ed.getAttribute('MimeType') || null });
    }
  }
  return out;
}
