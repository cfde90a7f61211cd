/** The pure parts of the access point: identifiers from the document, the SBDH, the ebMS header and error classification. */
import { expect } from 'chai';
import { invoiceXml } from '../purchases/support.js';
import { documentTypeIdOf, parseDocumentTypeId, parseXml, peppolIdentifiersOf, PeppolIdentifierError } from '../../domain/peppol/identifiers.js';
import { buildSbdh, parseSbd, SbdhError, payloadBody, SBDH_NS } from '../../domain/peppol/sbdh.js';
import {
  actionDocumentTypeId,
  ebmsError,
  EbmsHeaderError,
  errorSignalXml,
  isDuplicateRefusal,
  isTransientEbmsError,
  isTransientHttpStatus,
  readSignal,
  readUserMessage,
  userMessageXml,
  PEPPOL_AGREEMENT,
} from '../../domain/peppol/ebms.js';

const INVOICE_NS = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2';

describe('Peppol identifiers of a document', () => {
  it('reads participants, document type and process from the customization and profile', () => {
    const xml = invoiceXml({ number: 'ID-1', buyerTin: '1000000001', sellerTin: '1000000002' });
    const ids = peppolIdentifiersOf(xml);
    expect(ids.sender).to.deep.equal({ scheme: 'iso6523-actorid-upis', value: '0235:1000000002' });
    expect(ids.receiver).to.deep.equal({ scheme: 'iso6523-actorid-upis', value: '0235:1000000001' });
    expect(ids.rootName).to.equal('Invoice');
    expect(ids.documentTypeId).to.equal(`${INVOICE_NS}::Invoice##${ids.customizationId}::2.1`);
    expect(ids.customizationId).to.match(/^urn:peppol:pint:billing-1@ae-1/);
    expect(ids.processId).to.be.a('string').and.not.equal('');
    expect(ids.sellerCountry).to.equal('AE');
  });

  it('round-trips a document type id and refuses documents it cannot route', () => {
    const id = documentTypeIdOf(INVOICE_NS, 'Invoice', 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0');
    expect(parseDocumentTypeId(id)).to.deep.equal({ rootNamespace: INVOICE_NS, rootName: 'Invoice', customizationId: 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0', version: '2.1' });
    const xml = invoiceXml({ number: 'ID-2', buyerTin: '1000000001' });
    const noProfile = xml.replace(/<cbc:ProfileID>[^<]*<\/cbc:ProfileID>/, '');
    expect(() => peppolIdentifiersOf(noProfile)).to.throw(PeppolIdentifierError).with.property('code', 'PEPPOL_PROFILE_MISSING');
    expect(() => peppolIdentifiersOf('<a>')).to.throw(PeppolIdentifierError).with.property('code', 'PEPPOL_DOCUMENT_NOT_UBL');
    expect(() => peppolIdentifiersOf('<x xmlns="urn:other"/>')).to.throw(PeppolIdentifierError).with.property('code', 'PEPPOL_DOCUMENT_NOT_UBL');
  });
});

describe('SBDH', () => {
  const xml = invoiceXml({ number: 'SBDH-1', buyerTin: '1000000001', sellerTin: '1000000002' });
  const ids = peppolIdentifiersOf(xml);
  const sbd = buildSbdh(xml, ids, { instanceId: 'inst-1', createdAt: new Date('2026-01-02T03:04:05Z'), countryC1: 'AE' });

  it('wraps the document with DOCUMENTID, PROCESSID and COUNTRY_C1 scopes, and carries its bytes unchanged', () => {
    const parsed = parseSbd(Buffer.from(sbd));
    expect(parsed.facts).to.include({ documentTypeId: ids.documentTypeId, processId: ids.processId, countryC1: 'AE', instanceId: 'inst-1', standard: INVOICE_NS, type: 'Invoice', typeVersion: '2.1' });
    expect(parsed.facts.sender).to.deep.equal(ids.sender);
    expect(parsed.facts.receiver).to.deep.equal(ids.receiver);
    expect(parsed.payload.toString('utf8')).to.equal(payloadBody(xml).trim());
  });

  it('refuses an SBDH whose document type, process or receiver differ from the payload', () => {
    const wrongDoc = sbd.replace(`<InstanceIdentifier>${ids.documentTypeId.replace(/&/g, '&amp;')}</InstanceIdentifier>`, `<InstanceIdentifier>${documentTypeIdOf(INVOICE_NS, 'Invoice', 'urn:other')}</InstanceIdentifier>`);
    expect(wrongDoc).to.not.equal(sbd);
    expect(() => parseSbd(Buffer.from(wrongDoc))).to.throw(SbdhError, /DOCUMENTID/).with.property('code', 'SBDH_PAYLOAD_MISMATCH');
    const wrongReceiver = sbd.replace(`>${ids.receiver.value}</Identifier></Receiver>`, '>0235:9999999999</Identifier></Receiver>');
    expect(() => parseSbd(Buffer.from(wrongReceiver))).to.throw(SbdhError, /receiver/);
    const noCountry = sbd.replace(/<Scope><Type>COUNTRY_C1<\/Type>.*?<\/Scope>/, '');
    expect(() => parseSbd(Buffer.from(noCountry))).to.throw(SbdhError, /COUNTRY_C1/).with.property('code', 'SBDH_FIELD_MISSING');
    expect(() => parseSbd(Buffer.from(xml))).to.throw(SbdhError).with.property('code', 'SBDH_MISSING');
    expect(() => parseSbd(Buffer.from('<StandardBusinessDocument'))).to.throw(SbdhError).with.property('code', 'SBDH_NOT_WELL_FORMED');
  });

  it('reads the same envelope written otherwise: a prefix, white space, comments, CDATA and references in the header, and odd tails', () => {
    const expected = parseSbd(Buffer.from(sbd));
    const body = payloadBody(xml).trim();
    const prefixed = sbd
      .replace(/<(\/?)(StandardBusinessDocument|StandardBusinessDocumentHeader|HeaderVersion|Sender|Receiver|Identifier|DocumentIdentification|Standard|TypeVersion|InstanceIdentifier|Type|CreationDateAndTime|BusinessScope|Scope)([ >])/g, '<$1sh:$2$3')
      .replace(`xmlns="${SBDH_NS}"`, `xmlns:sh="${SBDH_NS}"`);
    const variants: [string, string][] = [
      ['a prefix on every header element', prefixed],
      ['white space after the root end tag', `${sbd}\r\n \t`],
      ['white space inside the root end tag', sbd.replace(/<\/StandardBusinessDocument>$/, '</StandardBusinessDocument \n>')],
      ['a comment after the root (the envelope read whole)', `${sbd}<!-- after -->`],
      ['comments, CDATA and character references in the header', sbd.replace('<InstanceIdentifier>inst-1</InstanceIdentifier>', '<InstanceIdentifier> <!-- x --><![CDATA[inst]]>&#x2D;1 </InstanceIdentifier>')],
    ];
    for (const [name, text] of variants) {
      expect(text, name).to.not.equal(sbd);
      const parsed = parseSbd(Buffer.from(text));
      expect(parsed.facts, name).to.deep.equal(expected.facts);
      expect(parsed.payloadIds, name).to.deep.equal(expected.payloadIds);
      if (!name.includes('read whole')) expect(parsed.payload.toString('utf8'), name).to.equal(body);
    }
    // An element of another namespace in the header is not the SBDH's own.
    const foreign = sbd.replace('<HeaderVersion>', `<x:Sender xmlns:x="urn:x"><x:Identifier>0088:1</x:Identifier></x:Sender><HeaderVersion>`);
    expect(parseSbd(Buffer.from(foreign)).facts).to.deep.equal(expected.facts);
    // A root end tag of another name is not the envelope's end.
    expect(() => parseSbd(Buffer.from(sbd.replace(/<\/StandardBusinessDocument>$/, '</StandardBusinessDocumentX>')))).to.throw(SbdhError).with.property('code', 'SBDH_NOT_WELL_FORMED');
  });
});

describe('ebMS 3 headers', () => {
  const header = {
    messageId: 'm-1@test',
    timestamp: '2026-01-01T00:00:00Z',
    conversationId: 'c-1',
    fromParty: 'POP000001',
    toParty: 'POP000002',
    processId: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
    documentTypeId: documentTypeIdOf(INVOICE_NS, 'Invoice', 'urn:x'),
    originalSender: { scheme: 'iso6523-actorid-upis', value: '0208:1' },
    finalRecipient: { scheme: 'iso6523-actorid-upis', value: '0208:2' },
    payloadContentId: 'p-1@test',
  };

  it('builds and reads a Peppol user message', () => {
    const el = parseXml(userMessageXml(header, 'id-1')).documentElement!;
    const read = readUserMessage(el);
    expect(read).to.include({ messageId: 'm-1@test', fromParty: 'POP000001', toParty: 'POP000002', agreementRef: PEPPOL_AGREEMENT, service: header.processId, conversationId: 'c-1' });
    expect(actionDocumentTypeId(read.action)).to.equal(header.documentTypeId);
    expect(read.finalRecipient).to.deep.equal(header.finalRecipient);
    expect(read.parts).to.deep.equal([{ href: 'cid:p-1@test', properties: { MimeType: 'application/xml', CompressionType: 'application/gzip' } }]);
  });

  it('refuses another agreement or a message without payload', () => {
    const other = parseXml(userMessageXml(header, 'id-1').replace(PEPPOL_AGREEMENT, 'urn:other')).documentElement!;
    expect(() => readUserMessage(other)).to.throw(EbmsHeaderError).with.property('kind', 'PROCESSING_MODE_MISMATCH');
    const noPart = parseXml(userMessageXml(header, 'id-1').replace(/<eb:PayloadInfo>.*<\/eb:PayloadInfo>/, '')).documentElement!;
    expect(() => readUserMessage(noPart)).to.throw(EbmsHeaderError).with.property('kind', 'VALUE_INCONSISTENT');
  });

  it('reads an error signal and classifies codes', () => {
    const xml = errorSignalXml({ messageId: 'e-1', timestamp: 't', refToMessageId: 'm-1', errors: [ebmsError('FAILED_DECRYPTION', 'bad <sig>', 'm-1')] }, 'id-2');
    const signal = readSignal(parseXml(xml).documentElement!);
    expect(signal).to.deep.include({ kind: 'error', refToMessageId: 'm-1' });
    const error = (signal as { errors: { code: string; description: string }[] }).errors[0]!;
    expect(error).to.include({ code: 'EBMS:0102', description: 'bad <sig>' });
    expect(isTransientEbmsError({ code: 'EBMS:0102', severity: 'failure' })).to.equal(false);
    expect(isTransientEbmsError({ code: 'EBMS:0005', severity: 'failure' })).to.equal(true);
    expect(isTransientEbmsError({ code: 'EBMS:0004', severity: 'warning' })).to.equal(true);
    expect(isDuplicateRefusal({ code: 'EBMS:0004', shortDescription: 'Other', description: 'Duplicate MessageID', detail: undefined })).to.equal(true);
    expect(isDuplicateRefusal({ code: 'EBMS:0004', shortDescription: 'Other', description: 'Unknown receiver', detail: undefined })).to.equal(false);
    expect([500, 502, 503, 408, 429].every(isTransientHttpStatus)).to.equal(true);
    expect([400, 403, 404, 413].some(isTransientHttpStatus)).to.equal(false);
  });
});
