/**
 * domain/peppol/xml-dom.ts builds an xmldom Document from saxes' parse events (the sending side
 * reads its answers with it). These tests prove the tree identical to xmldom's DOMParser's (every
 * node's type, name, namespace, prefix, local name, value and attributes in order) and every
 * element's exclusive C14N (xml-crypto's, what signatures are checked with) byte-identical, over
 * the service's own receipts, error signals and user messages, phase4's answers and documents with
 * odd namespaces, entities, CDATA, comments, processing instructions and white space; and that
 * what DOMParser refuses is refused.
 */
import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import type { Element, Node } from '@xmldom/xmldom';
import { ExclusiveCanonicalization } from 'xml-crypto';
import { parseXml } from '../../domain/peppol/identifiers.js';
import { parseXmlDom, parseXmlElements, textContentOf, type XmlElement } from '../../domain/peppol/xml-dom.js';
import { NS } from '../../domain/peppol/ebms.js';
import { buildUserMessage, errorEnvelope, header, readHttpMessage, receiptEnvelope } from '../../commands/peppol/as4/message.js';
import { verifySignature } from '../../commands/peppol/as4/wss.js';
import { userMessageHeader } from './support/headers.js';
import { createTestPki, type TestPki } from './support/pki.js';

/** Every node of the tree, one line each (attributes in document order). */
function dump(n: Node, depth = 0): string {
  const pad = ' '.repeat(depth);
  const x = n as Node & { target?: string };
  let s = `${pad}${n.nodeType}|${n.nodeName}|${n.namespaceURI}|${n.prefix}|${n.localName}|${JSON.stringify(n.nodeValue)}|${x.target ?? ''}\n`;
  const attrs = (n as Element).attributes;
  if (attrs) {
    for (let i = 0; i < attrs.length; i++) {
      const a = attrs.item(i)!;
      s += `${pad} @${a.nodeName}|${a.namespaceURI}|${a.prefix}|${a.localName}|${JSON.stringify(a.value)}\n`;
    }
  }
  for (let c = n.firstChild; c; c = c.nextSibling) s += dump(c, depth + 1);
  return s;
}

/** The exclusive C14N of every element of the document, in document order (with and without comments). */
function canonicalForms(doc: ReturnType<typeof parseXml>): string[] {
  const out: string[] = [];
  const walk = (n: Node) => {
    if (n.nodeType === 1) {
      for (const options of [{}, { inclusiveNamespacesPrefixList: ['wsu', 'S12'] }]) {
        try {
          out.push(new ExclusiveCanonicalization().process(n as never, options) as unknown as string);
        } catch (err) {
          // xml-crypto refuses some nodes (a processing instruction inside an element): it must refuse both trees alike.
          out.push(`refused: ${(err as Error).message}`);
        }
      }
    }
    for (let c = n.firstChild; c; c = c.nextSibling) walk(c);
  };
  walk(doc as unknown as Node);
  return out;
}

function expectSameTree(text: string) {
  const reference = parseXml(text);
  const built = parseXmlDom(text);
  expect(dump(built as unknown as Node)).to.equal(dump(reference as unknown as Node));
  expect(canonicalForms(built as never)).to.deep.equal(canonicalForms(reference as never));
}

const odd: [string, string][] = [
  ['no declaration, default namespace, undeclared default, redeclared prefix', `<a xmlns="urn:a" xmlns:p="urn:p1"><p:b xmlns:p="urn:p2" p:x="1"><c xmlns="">t</c></p:b><d xmlns:q="urn:q" q:y="2" y="3"/></a>`],
  ['declaration with standalone and trailing white space', `<?xml version="1.0" encoding="utf-8" standalone="yes"  ?>\n<r:root xmlns:r="urn:r"/>\n`],
  ['entities and character references', `<r a="&amp;&lt;&gt;&quot;&apos;&#x9;&#10;&#13;&#x1D11E;">&amp;&lt;&gt;&quot;&apos;&#13;&#x10000;&#233;é</r>`],
  ['line ends and white space in text and attributes', `<r a="x\ty\nz\r\nw  v">\r\n  line\rtwo\r\n\t<s>  </s>\n</r>`],
  ['CDATA sections', `<r><![CDATA[a<b>&amp;]]]]><![CDATA[>]]>x<![CDATA[]]></r>`],
  ['comments and processing instructions inside and outside the root', `<!--before--><?pi one two?><r><!-- in --><?target  data  ?><?t?>x<!---->y</r><!--after--><?after?>`],
  ['white space between the nodes outside the root', `<?xml version="1.0"?> \n<!--x-->\t<r> <s/> </r>\r\n<!--y--> <?z?> \n`],
  ['xml: attributes and many namespaces on one element', `<r xmlns:z="urn:z" xmlns:a="urn:a" xml:lang="en" xml:space="preserve" z:b="1" a:b="2" b="3"><x:e xmlns:x="urn:x" xmlns:unused="urn:u"/></r>`],
  ['non-ASCII names and values', `<é:ü xmlns:é="urn:é" attr="€"><中文>𝄞</中文></é:ü>`],
];

const refused: [string, string][] = [
  ['not well-formed', '<a><b></a>'],
  ['an unbound prefix', '<p:a/>'],
  ['a DOCTYPE', '<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>'],
  ['an undefined entity', '<a>&nbsp;</a>'],
  ['no root element', '<!-- nothing -->'],
  ['two root elements', '<a/><b/>'],
  ['text outside the root element', '<a/>text'],
];

/** Every element of a DOM as the plain tree holds it: namespace, local name, attributes by qualified name, text content, child elements. */
function elementsOfDom(el: Element): unknown {
  const attributes: Record<string, string> = Object.create(null);
  for (let i = 0; i < el.attributes.length; i++) attributes[el.attributes.item(i)!.nodeName] = el.attributes.item(i)!.value;
  const children: unknown[] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) children.push(elementsOfDom(c as Element));
  return { uri: el.namespaceURI ?? '', local: el.localName, attributes, text: el.textContent ?? '', children };
}
function elementsOfTree(el: XmlElement): unknown {
  return { uri: el.uri, local: el.local, attributes: el.attributes, text: textContentOf(el), children: el.content.filter((c): c is XmlElement => typeof c !== 'string').map(elementsOfTree) };
}

describe('AS4: the plain element tree (parseXmlElements) reads what the DOM reads', () => {
  for (const [name, text] of odd) {
    it(name, () => {
      expect(elementsOfTree(parseXmlElements(text))).to.deep.equal(elementsOfDom(parseXml(text).documentElement!));
    });
  }
  it('attributes named like Object properties', () => {
    const text = `<a __proto__="1" constructor="2" toString="3"><b hasOwnProperty="4"/></a>`;
    expect(elementsOfTree(parseXmlElements(text))).to.deep.equal(elementsOfDom(parseXml(text).documentElement!));
    expect(parseXmlElements(text).attributes.__proto__).to.equal('1');
  });
  it('an SBDH header with prefixes, comments, CDATA and character references', () => {
    const text =
      `<?xml version="1.0"?><s:StandardBusinessDocument xmlns:s="http://www.unece.org/cefact/namespaces/StandardBusinessDocumentHeader"><s:StandardBusinessDocumentHeader>` +
      `<s:HeaderVersion>1.0</s:HeaderVersion><s:Sender><s:Identifier Authority="iso6523-actorid-upis"> 0088:<!-- c -->12&#x33;<![CDATA[4]]> </s:Identifier></s:Sender>` +
      `<s:Receiver xmlns:x="urn:x"><x:Identifier Authority="a">not this</x:Identifier><s:Identifier>0088:5</s:Identifier></s:Receiver></s:StandardBusinessDocumentHeader></s:StandardBusinessDocument>`;
    expect(elementsOfTree(parseXmlElements(text))).to.deep.equal(elementsOfDom(parseXml(text).documentElement!));
  });
  for (const [name, text] of refused) {
    it(`refuses what parseXmlDom refuses: ${name}`, () => {
      expect(() => parseXmlDom(text), 'DOM').to.throw();
      expect(() => parseXmlElements(text), 'plain tree').to.throw();
    });
  }
});

describe('AS4: a DOM built from saxes events is the DOMParser tree', () => {
  describe('documents with odd constructs', () => {
    for (const [name, text] of odd) it(name, () => expectSameTree(text));
  });

  describe("the service's own signals and messages", function () {
    this.timeout(60_000);
    let pki: TestPki;
    before(async () => {
      pki = await createTestPki();
    });
    it('a receipt, an error signal and the SOAP part of a user message', () => {
      const receiver = { privateKeyPem: pki.service.keyPem, certificatePem: pki.service.certPem, commonName: pki.service.commonName };
      const sender = { privateKeyPem: pki.service2.keyPem, certificatePem: pki.service2.certPem, commonName: pki.service2.commonName };
      const built = buildUserMessage(
        userMessageHeader({ messageId: 'm-1@x', conversationId: 'c & <1>', fromParty: 'POP000002', toParty: 'POP000001' }),
        Buffer.from('<sbd/>'),
        sender,
        pki.service.certPem,
      );
      let soap = '';
      readHttpMessage(built.contentType, built.body, { maxPartBytes: 1 << 20 }, (text) => {
        soap = text;
        return parseXml(text);
      });
      expectSameTree(soap);
      const references = built.references.map((r) => ({ uri: r.uri, xml: `<ds:Reference xmlns:ds="${NS.ds}" URI="${r.uri}"><ds:DigestValue>${r.digest}</ds:DigestValue></ds:Reference>`, digestAlgorithm: 'x', digestValue: r.digest }));
      expectSameTree(receiptEnvelope(receiver, { refToMessageId: 'm-1@x', timestamp: '2026-12-07T13:14:16Z', references }));
      expectSameTree(
        errorEnvelope(receiver, {
          refToMessageId: 'm-1@x',
          timestamp: '2026-12-07T13:14:16Z',
          errors: [{ code: 'EBMS:0004', severity: 'failure', shortDescription: 'Other', category: 'Content', description: 'a < b & "c"\r\n', refToMessageInError: 'm-1@x' }],
        }),
      );
    });
  });

  describe("phase4's answers (receipts and an error signal, as it sent them to the service)", () => {
    const dir = new URL('./fixtures/phase4-answers/', import.meta.url);
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.xml'))) {
      it(`${file}: the same tree, and its signature verifies on the built one`, () => {
        const text = readFileSync(new URL(file, dir), 'utf8');
        expectSameTree(text);
        const doc = parseXmlDom(text);
        const signature = header(doc, NS.wsse, 'Security')!.getElementsByTagNameNS(NS.ds, 'Signature').item(0)!;
        expect(verifySignature(doc, signature, () => null).references.length).to.be.greaterThan(0);
      });
    }
  });

  describe('where it differs from DOMParser', () => {
    it('a leading byte order mark (allowed by XML) is accepted and kept out of the tree; DOMParser refuses it', () => {
      expect(() => parseXml('\ufeff<a/>')).to.throw();
      expect(dump(parseXmlDom('\ufeff<?xml version="1.0"?><a/>') as unknown as Node)).to.equal(dump(parseXml('<?xml version="1.0"?><a/>') as unknown as Node));
    });
    it('"<!DOCTYPE" anywhere is refused, as readHttpMessage refuses it before parsing', () => {
      expect(() => parseXmlDom('<a><!-- <!DOCTYPE --></a>')).to.throw(/document type/);
    });
  });

  describe('what DOMParser refuses is refused', () => {
    for (const [name, text] of refused) {
      it(name, () => {
        expect(() => parseXml(text), 'DOMParser').to.throw();
        expect(() => parseXmlDom(text), 'saxes').to.throw();
      });
    }
  });
});
