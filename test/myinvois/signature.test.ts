/**
 * The MyInvois document signature, checked by independent implementations: xmlsec1 verifies the
 * XML signature (both references, the RSA-SHA256 value, the certificate against the test CA);
 * OpenSSL confirms the certificate digest, issuer serial and chain the signed properties name.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateInvoiceXml } from '../../domain/artifacts/index.js';
import { documentDigest, MyInvoisSignatureError, NS, parseXml, signMyInvoisDocument } from '../../domain/myinvois/signature.js';
import { malaysianDocument } from '../artifacts/fixtures.js';
import { openssl, taxpayerPki, xmlsecVerify, type TaxpayerPki } from './support.js';

const unsigned = () =>
  generateInvoiceXml({ country: 'MY', documentType: { base: 'tax_invoice', modifiers: [] }, document: malaysianDocument(), uuid: '2b6c1d5e-8f3a-4c7d-9e1b-0a2f3c4d5e6f' } as never).xml;

const text = (xml: string, ns: string, local: string, i = 0) => parseXml(xml).getElementsByTagNameNS(ns, local).item(i)?.textContent ?? null;

describe('MyInvois document signature', function () {
  this.timeout(30000);
  let pki: TaxpayerPki;
  let signed: ReturnType<typeof signMyInvoisDocument>;
  before(async () => {
    pki = await taxpayerPki();
    signed = signMyInvoisDocument({ xml: unsigned(), privateKeyPem: pki.keyPem, certificatePem: pki.certificatePem, signingTime: '2025-07-01T10:00:00Z' });
  });

  it('is verified by xmlsec1 against the issuing CA', async () => {
    const r = await xmlsecVerify(pki, signed.xml);
    expect(r.output).to.contain('SignedInfo References (ok/all): 2/2');
    expect(r.ok, r.output).to.equal(true);
  });

  it('fails xmlsec1 once the document, the signed properties or the signature value is changed', async () => {
    const tampered = [
      signed.xml.replace('Laptop 14 inch', 'Laptop 15 inch'),
      signed.xml.replace('2025-07-01T10:00:00Z', '2025-07-02T10:00:00Z'),
      signed.xml.replace(/<ds:SignatureValue>(.)/, (_m, c: string) => `<ds:SignatureValue>${c === 'A' ? 'B' : 'A'}`),
    ];
    for (const [i, xml] of tampered.entries()) {
      const r = await xmlsecVerify(pki, xml, `tampered-${i}.xml`);
      expect(r.ok, `tampered ${i}: ${r.output}`).to.equal(false);
    }
  });

  it('carries the structure MyInvois checks: UBLExtensions first, cac:Signature before the supplier, the XAdES signed properties', () => {
    const doc = parseXml(signed.xml);
    const root = doc.documentElement!;
    const elements = [...Array.from({ length: root.childNodes.length }, (_, i) => root.childNodes.item(i))].filter((n) => n!.nodeType === 1) as unknown as Element[];
    expect(elements[0]!.localName).to.equal('UBLExtensions');
    const names = elements.map((e) => e.localName);
    expect(names.indexOf('Signature')).to.equal(names.indexOf('AccountingSupplierParty') - 1);
    expect(text(signed.xml, NS.ext, 'ExtensionURI')).to.equal('urn:oasis:names:specification:ubl:dsig:enveloped:xades');
    expect(text(signed.xml, NS.cbc, 'SignatureMethod')).to.equal('urn:oasis:names:specification:ubl:dsig:enveloped:xades');
    expect(text(signed.xml, NS.xades, 'SigningTime')).to.equal('2025-07-01T10:00:00Z');
    expect(unsigned()).to.contain('listVersionID="1.0"');
    expect(doc.getElementsByTagNameNS(NS.cbc, 'InvoiceTypeCode').item(0)!.getAttribute('listVersionID')).to.equal('1.1');
    // DocDigest: the document without UBLExtensions and cac:Signature.
    expect(text(signed.xml, NS.ds, 'DigestValue', 0)).to.equal(documentDigest(doc)).and.to.equal(signed.docDigest);
    expect(signed.documentHash).to.equal(createHash('sha256').update(signed.bytes).digest('hex'));
  });

  it('names the certificate as OpenSSL reads it: digest, issuer serial, chain', async () => {
    const der = Buffer.from(text(signed.xml, NS.ds, 'X509Certificate')!, 'base64');
    await writeFile(join(pki.dir, 'embedded.der'), der);
    const digest = await openssl(['dgst', '-sha256', '-binary', '-out', 'digest.bin', 'embedded.der'], pki.dir).then(async () => (await import('node:fs/promises')).readFile(join(pki.dir, 'digest.bin')));
    // the CertDigest is the second ds:DigestValue inside the signed properties
    const props = parseXml(signed.xml).getElementsByTagNameNS(NS.xades, 'CertDigest').item(0)!;
    expect(props.getElementsByTagNameNS(NS.ds, 'DigestValue').item(0)!.textContent).to.equal(digest.toString('base64'));
    const serialHex = (await openssl(['x509', '-inform', 'DER', '-in', 'embedded.der', '-noout', '-serial'], pki.dir)).trim().replace(/^serial=/, '');
    expect(text(signed.xml, NS.ds, 'X509SerialNumber')).to.equal(BigInt(`0x${serialHex}`).toString(10));
    const issuer = (await openssl(['x509', '-inform', 'DER', '-in', 'embedded.der', '-noout', '-issuer', '-nameopt', 'RFC2253'], pki.dir)).trim().replace(/^issuer=/, '');
    expect(text(signed.xml, NS.ds, 'X509IssuerName')!.replace(/, /g, ',')).to.equal(issuer);
    await openssl(['x509', '-inform', 'DER', '-in', 'embedded.der', '-out', 'embedded.pem'], pki.dir);
    expect(await openssl(['verify', '-CAfile', 'ca.pem', 'embedded.pem'], pki.dir)).to.contain('OK');
  });

  it('signs again over an earlier signature, replacing it', async () => {
    const again = signMyInvoisDocument({ xml: signed.xml, privateKeyPem: pki.keyPem, certificatePem: pki.certificatePem, signingTime: '2025-07-01T11:00:00Z' });
    expect(again.xml.match(/<ext:UBLExtensions>/g)).to.have.length(1);
    expect(again.xml.match(/<cac:Signature>/g)).to.have.length(1);
    expect(again.docDigest).to.equal(signed.docDigest);
    expect((await xmlsecVerify(pki, again.xml, 'again.xml')).ok).to.equal(true);
  });

  it('refuses what it cannot sign, precisely', () => {
    const sign = (over: Partial<Parameters<typeof signMyInvoisDocument>[0]>) => () =>
      signMyInvoisDocument({ xml: unsigned(), privateKeyPem: pki.keyPem, certificatePem: pki.certificatePem, signingTime: '2025-07-01T10:00:00Z', ...over });
    expect(sign({ xml: '<Invoice' })).to.throw(MyInvoisSignatureError, /not well-formed/);
    expect(sign({ xml: '<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"/>' })).to.throw(MyInvoisSignatureError, /UBL Invoice/);
    expect(sign({ signingTime: '2025-07-01 10:00' })).to.throw(MyInvoisSignatureError, /signing time/);
    expect(sign({ privateKeyPem: 'not a key' })).to.throw(MyInvoisSignatureError, /signing key/);
    expect(sign({ certificatePem: 'not a certificate' })).to.throw(MyInvoisSignatureError, /certificate/);
  });
});
