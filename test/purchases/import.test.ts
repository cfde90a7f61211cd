import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testDb } from '../support/db.js';
import { startTestService, type TestService } from '../support/http.js';
import { invoiceXml, receiver, type Receiver } from './support.js';
import { admin } from '../support/cli.js';


describe('purchases: admin purchases receive (UBL 2.1 import)', function () {
  this.timeout(180000);
  let t: TestService;
  let r: Receiver;
  const dir = mkdtempSync(path.join(tmpdir(), 'purchases-import-'));
  const file = (name: string, content: string | Buffer) => {
    const p = path.join(dir, name);
    writeFileSync(p, content);
    return p;
  };
  const stored = async () => Number((await testDb().knex('purchase_invoices').where({ workspace_id: r.workspaceId }).count({ n: '*' }))[0]!.n);
  const receive = (f: string, extra: string[] = [], env: Record<string, string> = {}) =>
    admin(['purchases', 'receive', '--workspace', r.workspaceId, '--environment', 'sandbox', '--file', f, ...extra], env);

  before(async () => {
    t = await startTestService();
    r = await receiver(t);
  });
  after(async () => t.close());

  it('imports a UBL invoice addressed to a company of the workspace, and a second import of it is a duplicate', async () => {
    const f = file('good.xml', invoiceXml({ number: 'IMP-1', buyerTin: r.tin, buyerReference: r.company.userGivenBranchId }));
    const first = await receive(f);
    expect(first.code, first.stderr).to.equal(0);
    const out = JSON.parse(first.stdout);
    expect(out).to.include({ workspaceId: r.workspaceId, companyId: r.company.companyId, invoiceNumber: 'IMP-1', duplicate: false });
    const read = await r.read(out.documentId);
    expect(read.status).to.equal(200);
    expect(read.json.data).to.include({ channel: 'ubl_import', invoiceNumber: 'IMP-1' });
    expect(read.json.data.attribution.userGivenBranchId).to.equal(r.company.userGivenBranchId);
    const second = await receive(f);
    expect(second.code, second.stderr).to.equal(0);
    expect(JSON.parse(second.stdout)).to.include({ documentId: out.documentId, duplicate: true });
    expect(await stored()).to.equal(1);
  });

  it('imports a UBL credit note with --company when the buyer endpoint is not a participant id', async () => {
    const xml = invoiceXml({ number: 'IMP-2', buyerTin: '5555555555', base: 'credit_note' });
    const res = await receive(file('other-endpoint.xml', xml), ['--company', r.company.companyId]);
    expect(res.code, res.stderr).to.equal(0);
    const read = await r.read(JSON.parse(res.stdout).documentId);
    expect(read.json.data.documentType).to.deep.equal({ base: 'credit_note', modifiers: [] });
    expect(xml).to.contain('<CreditNote');
    expect(await stored()).to.equal(2);
  });

  const refusals: [string, string | Buffer, RegExp, Record<string, string>?][] = [
    ['not well-formed', '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><cbc:ID>1</Invoice>', /not well-formed/],
    ['not XML', 'hello, world', /not well-formed/],
    ['not UBL', '<?xml version="1.0"?><Order xmlns="urn:oasis:names:specification:ubl:schema:xsd:Order-2"><ID>1</ID></Order>', /expected a UBL 2.1 Invoice or CreditNote/],
    [
      'schema-invalid',
      '<?xml version="1.0"?><Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"><cbc:ID>1</cbc:ID><cbc:Nonsense>x</cbc:Nonsense></Invoice>',
      /fails the UBL 2\.1 schema/,
    ],
    [
      'a DOCTYPE with an entity',
      '<?xml version="1.0"?><!DOCTYPE Invoice [<!ENTITY e SYSTEM "file:///etc/passwd">]><Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>&e;</ID></Invoice>',
      /DOCTYPE/,
    ],
    ['an external DTD', '<?xml version="1.0"?><!DOCTYPE Invoice SYSTEM "http://127.0.0.1:9/x.dtd"><Invoice/>', /DOCTYPE/],
    ['oversized', 'x', /at most 2048 are accepted/, { PURCHASE_MAX_XML_BYTES: '2048' }],
  ];
  for (const [name, content, message, env] of refusals) {
    it(`refuses ${name} with one line and exit code 2, storing nothing`, async () => {
      const before = await stored();
      const body = name === 'oversized' ? invoiceXml({ number: 'BIG', buyerTin: r.tin, lines: 30 }) : content;
      const res = await receive(file(`${name.replace(/\W+/g, '-')}.xml`, body), [], env ?? {});
      expect(res.code, res.stdout + res.stderr).to.equal(2);
      expect(res.stdout).to.equal('');
      expect(res.stderr.trim().split('\n'), res.stderr).to.have.length(1);
      expect(res.stderr).to.match(message);
      expect(await stored()).to.equal(before);
    });
  }

  it('refuses a document that names no company of the workspace, and an unknown --company', async () => {
    const before = await stored();
    const nobody = await receive(file('nobody.xml', invoiceXml({ number: 'IMP-X', buyerTin: '4444444444' })));
    expect(nobody.code).to.equal(2);
    expect(nobody.stderr).to.match(/no active company .* has the buyer endpoint 0235:4444444444/);
    const other = await receiver(t);
    const foreign = await receive(file('foreign.xml', invoiceXml({ number: 'IMP-Y', buyerTin: other.tin })));
    expect(foreign.code).to.equal(2);
    const unknownCompany = await receive(file('good2.xml', invoiceXml({ number: 'IMP-Z', buyerTin: r.tin })), ['--company', 'ffffffffffffffffffffffff']);
    expect(unknownCompany.code).to.equal(2);
    expect((await receive(path.join(dir, 'missing.xml'))).code).to.equal(2);
    // The production environment has no company of this workspace.
    const prod = await admin(['purchases', 'receive', '--workspace', r.workspaceId, '--environment', 'production', '--file', path.join(dir, 'good.xml')]);
    expect(prod.code).to.equal(2);
    expect(await stored()).to.equal(before);
  });
});
