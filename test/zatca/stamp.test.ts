/**
 * ZATCA's cryptographic stamp, checked by independent implementations: xmlsec1 recomputes the
 * invoice reference's digest (XPath transforms and C14N 1.1), OpenSSL verifies the ECDSA value
 * over the invoice hash, the certificate digest, the SignedProperties digest, the QR's public
 * key and the certificate's signature (tags 8 and 9); a tampered document fails each.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateInvoiceXml } from '../../domain/artifacts/index.js';
import { buildCsr } from '../../commands/zatca/egs-units.js';
import { decodeQrTags, invoiceHashOf, stampInvoice, verifyStamp, zatcaStamper, type StampResult } from '../../domain/zatca/stamp.js';
import { saudiDocument } from '../artifacts/fixtures.js';
import { mainSchema, validateAgainst } from '../artifacts/xsd.js';
import { openssl, openTestCa, type TestCa } from './test-ca.js';

const subject = { commonName: 'TST-886431145-399999999900003', serialNumber: '1-Ledger|2-1.0|3-ed22f1d8', organizationUnit: 'Riyadh Branch', organizationName: 'Maximum Speed Tech Supply LTD', country: 'SA' as const, invoiceType: '1100', location: 'RRRD2929', industry: 'Supply activities' };

const simplified = () =>
  generateInvoiceXml({ country: 'SA', documentType: { base: 'tax_invoice', modifiers: [], variant: 'simplified' }, document: saudiDocument({ simplified: true, number: 'SA-S-0001' }), uuid: 'uuid-simplified', issueTimestamp: '2025-07-01T09:00:00Z', invoiceCounter: 7 });
const standard = () =>
  generateInvoiceXml({ country: 'SA', documentType: { base: 'tax_invoice', modifiers: [] }, document: saudiDocument({ number: 'SA-0001' }), uuid: 'uuid-standard', issueTimestamp: '2025-07-01T09:00:00Z', invoiceCounter: 8 });

const between = (xml: string, open: string, close: string) => {
  const start = xml.indexOf(open);
  return xml.slice(start, xml.indexOf(close, start) + close.length);
};
const tagText = (xml: string, tag: string) => new RegExp(`<${tag}[^>]*>([^<]*)</${tag}>`).exec(xml)![1]!;

describe('ZATCA cryptographic stamp (checked by xmlsec1 and OpenSSL)', function () {
  this.timeout(60000);
  let ca: TestCa;
  let dir: string;
  let key: KeyObject;
  let certificate: string;
  const file = (name: string, content: string | Buffer) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const certPem = () => `-----BEGIN CERTIFICATE-----\n${certificate.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;

  /**
   * xmlsec1's verdict on the invoice reference. ZATCA's XPath expressions start with "//", which
   * by XPath's rules selects the same nodes whatever the context node, so a conforming processor
   * filters out the whole document; the copy given to xmlsec1 states them relative to the node
   * (their evident meaning, and what ZATCA's validator does), and drops the SignedProperties
   * reference, whose digest ZATCA encodes as base64 of hex (checked with OpenSSL below).
   */
  const xmlsecReferences = (signed: string): string => {
    const copy = signed.replaceAll('not(//ancestor-or-self::', 'not(ancestor-or-self::').replace(/<ds:Reference Type="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#SignatureProperties".*?<\/ds:Reference>/, '');
    const run = spawnSync('xmlsec1', ['--verify', '--pubkey-cert-pem', file('cert.pem', certPem()), '--enabled-reference-uris', 'empty', '--print-debug', file('copy.xml', copy)], { encoding: 'utf8' });
    return /SignedInfo References \(ok\/all\): (\d+\/\d+)/.exec(run.stdout + run.stderr)?.[1] ?? `no answer: ${run.stderr}`;
  };

  before(() => {
    ca = openTestCa();
    dir = mkdtempSync(join(tmpdir(), 'zatca-stamp-'));
    const pair = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
    key = pair.privateKey;
    certificate = ca.issue(buildCsr({ environment: 'sandbox', sellerVat: '399999999900003', subject }, key, pair.publicKey.export({ type: 'spki', format: 'pem' }).toString()));
  });
  after(() => {
    ca.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const stamp = (xml: string): StampResult => stampInvoice(xml, { privateKey: key, certificate }, '2025-07-01T09:00:05Z');
  /** The generator's own stamping (no parse), as delivery uses it. */
  const generatedStamped = (variant: 'simplified' | 'standard') => {
    const stamper = zatcaStamper({ privateKey: key, certificate }, '2025-07-01T09:00:05Z');
    return variant === 'simplified'
      ? generateInvoiceXml({ country: 'SA', documentType: { base: 'tax_invoice', modifiers: [], variant: 'simplified' }, document: saudiDocument({ simplified: true, number: 'SA-S-0001' }), uuid: 'uuid-simplified', issueTimestamp: '2025-07-01T09:00:00Z', invoiceCounter: 7, stamp: stamper })
      : generateInvoiceXml({ country: 'SA', documentType: { base: 'tax_invoice', modifiers: [] }, document: saudiDocument({ number: 'SA-0001' }), uuid: 'uuid-standard', issueTimestamp: '2025-07-01T09:00:00Z', invoiceCounter: 8, stamp: stamper });
  };

  it("keeps the generator's invoice hash, and xmlsec1 computes the same digest for the invoice reference", () => {
    for (const gen of [simplified(), standard()]) {
      const signed = stamp(gen.xml);
      expect(signed.invoiceHash).to.equal(gen.hash);
      expect(invoiceHashOf(signed.xml)).to.equal(gen.hash);
      expect(tagText(signed.xml, 'ds:DigestValue')).to.equal(gen.hash);
      expect(xmlsecReferences(signed.xml)).to.equal('1/1');
      expect(verifyStamp(signed.xml)).to.deep.equal([]);
    }
  });

  it("the generator's stamp (as delivery stamps, without a parse) writes the same document but for the signature value", () => {
    for (const [variant, gen] of [['simplified', simplified()], ['standard', standard()]] as const) {
      const generated = generatedStamped(variant);
      expect(generated.hash).to.equal(gen.hash);
      expect(verifyStamp(generated.xml)).to.deep.equal([]);
      expect(xmlsecReferences(generated.xml)).to.equal('1/1');
      const parsed = stamp(gen.xml);
      // Masked: the signature values (ECDSA draws a nonce) and the two serializers' spellings of the same infoset.
      const mask = (xml: string) =>
        xml
          .replace(/<ds:SignatureValue>[^<]+/, '')
          .replace(/<cbc:ID>QR<\/cbc:ID><cac:Attachment><cbc:EmbeddedDocumentBinaryObject mimeCode="text\/plain">[^<]+/, '')
          .replace('?>\n', '?>')
          .replace(/<([\w:]+)([^<>]*)><\/\1>/g, '<$1$2/>');
      expect(mask(generated.xml)).to.equal(mask(parsed.xml));
    }
  });

  it('writes the ZATCA structure: UBLExtensions first, cac:Signature before the parties, the XAdES signed properties', () => {
    const { xml } = stamp(simplified().xml);
    expect(xml).to.match(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n<Invoice [^>]*><ext:UBLExtensions xmlns:ext="[^"]+"><ext:UBLExtension><ext:ExtensionURI>urn:oasis:names:specification:ubl:dsig:enveloped:xades<\/ext:ExtensionURI><ext:ExtensionContent><sig:UBLDocumentSignatures /);
    expect(xml).to.include('<sac:SignatureInformation><cbc:ID>urn:oasis:names:specification:ubl:signature:1</cbc:ID><sbc:ReferencedSignatureID>urn:oasis:names:specification:ubl:signature:Invoice</sbc:ReferencedSignatureID><ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Id="signature">');
    expect(xml).to.match(/<cbc:ID>QR<\/cbc:ID>.*?<\/cac:AdditionalDocumentReference><cac:Signature><cbc:ID>urn:oasis:names:specification:ubl:signature:Invoice<\/cbc:ID><cbc:SignatureMethod>urn:oasis:names:specification:ubl:dsig:enveloped:xades<\/cbc:SignatureMethod><\/cac:Signature><cac:AccountingSupplierParty>/);
    expect(tagText(xml, 'xades:SigningTime')).to.equal('2025-07-01T09:00:05');
    const serial = BigInt(`0x${openssl(['x509', '-noout', '-serial'], certPem()).toString().trim().split('=')[1]}`).toString();
    expect(tagText(xml, 'ds:X509SerialNumber')).to.equal(serial);
    expect(tagText(xml, 'ds:X509IssuerName')).to.equal('CN=Test ZATCA-like issuing CA, O=Test fixture, C=SA');
  });

  it('stamped standard and simplified invoices stay valid against the UBL 2.1 Invoice schema (with its signature schemas)', async function () {
    this.timeout(180_000);
    const docs = [
      { name: 'simplified', xml: stamp(simplified().xml).xml },
      { name: 'standard', xml: stamp(standard().xml).xml },
      { name: 'simplified, stamped by the generator', xml: generatedStamped('simplified').xml },
    ];
    for (const [name, r] of await validateAgainst(mainSchema('Invoice'), docs)) expect(r.valid, `${name}: ${r.errors.join(' | ')}`).to.equal(true);
  });

  it('OpenSSL verifies the ECDSA value over the invoice hash, the certificate digest and the SignedProperties digest', () => {
    const { xml, invoiceHash } = stamp(simplified().xml);
    const pub = file('pub.pem', openssl(['x509', '-noout', '-pubkey'], certPem()));
    const verified = openssl(['dgst', '-sha256', '-verify', pub, '-signature', file('sig.der', Buffer.from(tagText(xml, 'ds:SignatureValue'), 'base64')), file('hash.bin', Buffer.from(invoiceHash, 'base64'))]);
    expect(verified.toString().trim()).to.equal('Verified OK');
    const hex = (path: string) => openssl(['dgst', '-sha256', '-r', path]).toString().split(' ')[0]!;
    const certDigest = between(xml, '<xades:CertDigest>', '</xades:CertDigest>');
    expect(tagText(certDigest, 'ds:DigestValue')).to.equal(Buffer.from(hex(file('cert.b64', certificate))).toString('base64'));
    const props = between(xml, '<xades:SignedProperties', '</xades:SignedProperties>');
    const propsRef = between(xml, '<ds:Reference Type="http://www.w3.org/2000/09/xmldsig#SignatureProperties"', '</ds:Reference>');
    expect(tagText(propsRef, 'ds:DigestValue')).to.equal(Buffer.from(hex(file('props.xml', props))).toString('base64'));
  });

  it('writes QR tags 1-9 for a simplified invoice (8 the public key, 9 the certificate signature, as OpenSSL reads them), 1-8 for a standard one', () => {
    const signed = stamp(simplified().xml);
    const tags = decodeQrTags(signed.qr);
    expect([...tags.keys()]).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(tags.get(6)!.toString()).to.equal(signed.invoiceHash);
    expect(tags.get(7)!.toString()).to.equal(signed.signatureValue);
    const spki = openssl(['pkey', '-pubin', '-outform', 'DER'], openssl(['x509', '-noout', '-pubkey'], certPem()));
    expect(tags.get(8)!.equals(spki)).to.equal(true);
    const dump = openssl(['x509', '-noout', '-text'], certPem()).toString();
    const sigHex = dump.slice(dump.lastIndexOf('Signature Value:') + 'Signature Value:'.length).replace(/[\s:]/g, '');
    expect(tags.get(9)!.toString('hex')).to.equal(sigHex);
    expect(openssl(['verify', '-CAfile', file('ca.pem', ca.certificatePem), file('cert.pem', certPem())]).toString()).to.match(/: OK/);
    expect([...decodeQrTags(stamp(standard().xml).qr).keys()]).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('a tampered document fails: xmlsec1 on the reference, OpenSSL on the signature, and the checker names the part', () => {
    const { xml } = stamp(simplified().xml);
    const tampered = xml.replace('<cbc:ID>SA-S-0001</cbc:ID>', '<cbc:ID>SA-S-0002</cbc:ID>');
    expect(xmlsecReferences(tampered)).to.equal('0/1');
    expect(verifyStamp(tampered).map((p) => p.path)).to.include("ds:Reference[@Id='invoiceSignedData']/ds:DigestValue");
    // A signature value of another document: OpenSSL refuses it over this hash.
    const other = stamp(standard().xml);
    const forged = xml.replace(tagText(xml, 'ds:SignatureValue'), other.signatureValue);
    const pub = file('pub.pem', openssl(['x509', '-noout', '-pubkey'], certPem()));
    const run = spawnSync('openssl', ['dgst', '-sha256', '-verify', pub, '-signature', file('forged.der', Buffer.from(other.signatureValue, 'base64')), file('hash2.bin', Buffer.from(invoiceHashOf(forged), 'base64'))], { encoding: 'utf8' });
    expect(run.stdout.trim()).to.equal('Verification failure');
    expect(verifyStamp(forged).map((p) => p.path)).to.deep.equal(['ds:SignatureValue', 'QR tag 7']);
    const badTime = xml.replace('<xades:SigningTime>2025-07-01T09:00:05', '<xades:SigningTime>2025-07-01T09:00:06');
    expect(verifyStamp(badTime).map((p) => p.path)).to.deep.equal(["ds:Reference[@URI='#xadesSignedProperties']/ds:DigestValue"]);
    expect(() => stamp(xml)).to.throw(/stamped already/);
  });
});
