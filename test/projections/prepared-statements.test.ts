/**
 * The read side's hot statements run as prepared statements named after their text
 * (readmodels/prepared.ts marks them, platform/prepared-statements.ts names them at the driver):
 * PostgreSQL parses each once per connection and keeps a generic plan, and a rebuild's search
 * path still sends them to the rebuild's tables.
 */
import { expect } from 'chai';
import { statementName } from '../../platform/prepared-statements.js';
import { prepared } from '../../readmodels/prepared.js';
import { insertSalesDocuments } from '../../readmodels/sales-documents.js';
import { openOwnTestDatabase } from '../support/db.js';
import { salesDocumentRow } from '../support/sales-documents.js';

const salesRow = (i: number) => salesDocumentRow('prep', i);

describe('read model statements prepared by name', function () {
  this.timeout(60_000);
  let own: Awaited<ReturnType<typeof openOwnTestDatabase>>;

  before(async () => {
    own = await openOwnTestDatabase('prepared');
  });
  after(async () => {
    await own?.drop();
  });

  it('names a statement after its text: the same text the same name, another text another, within an identifier', () => {
    const a = statementName('select 1 where $1::int = 1');
    expect(a).to.equal(statementName('select 1 where $1::int = 1'));
    expect(a).to.not.equal(statementName('select 2 where $1::int = 1'));
    expect(a).to.match(/^rm_[A-Za-z0-9_-]{32}$/);
    expect(Buffer.byteLength(a!)).to.be.at.most(63);
  });

  it('parses a statement once per connection and keeps its generic plan', async () => {
    await own.db.knex.transaction(async (trx) => {
      // One connection for the transaction: the statement (both tables' inserts) is prepared on it.
      for (let i = 0; i < 8; i++) await insertSalesDocuments(trx, [salesRow(i)]);
      const { rows } = await trx.raw(
        `select statement, generic_plans, custom_plans from pg_prepared_statements
          where name like 'rm\\_%' and statement like 'with r0 as%insert into sales_documents%'`,
      );
      expect(rows).to.have.length(1);
      expect(Number(rows[0].generic_plans) + Number(rows[0].custom_plans)).to.equal(8);
      expect(Number(rows[0].generic_plans)).to.be.greaterThan(0);
    });
    const [counted] = await own.db.knex('sales_documents').where('workspace_id', 'ws_prep').count({ n: '*' });
    expect(Number(counted?.n)).to.equal(8);
  });

  it('names the text knex runs, and leaves an unmarked statement unnamed', async () => {
    await own.db.knex.transaction(async (trx) => {
      await prepared(trx('sales_documents').where('workspace_id', 'ws_named').count({ n: '*' }));
      await trx('sales_documents').where('environment', 'sandbox').count({ n: '*' });
      const { rows } = await trx.raw(`select name, statement from pg_prepared_statements where statement like '%from "sales_documents"%'`);
      expect(rows).to.deep.equal([
        { name: statementName('select count(*) as "n" from "sales_documents" where "workspace_id" = $1'), statement: 'select count(*) as "n" from "sales_documents" where "workspace_id" = $1' },
      ]);
    });
  });

  it("follows the search path a rebuild sets: the same prepared statement reads the rebuild's table", async () => {
    const { knex } = own.db;
    await knex.raw('create table prep_probe (x int); insert into prep_probe values (1)');
    await knex.raw('create schema prep_rebuild; create table prep_rebuild.prep_probe (x int); insert into prep_rebuild.prep_probe values (2)');
    await knex.transaction(async (trx) => {
      const read = async () => (await prepared(trx.raw('select x from prep_probe where x > ?', [0]))).rows.map((r: { x: number }) => r.x);
      for (let i = 0; i < 6; i++) expect(await read()).to.deep.equal([1]);
      await trx.raw('set local search_path to prep_rebuild, public');
      expect(await read()).to.deep.equal([2]);
      await trx.raw('set local search_path to public');
      expect(await read()).to.deep.equal([1]);
    });
  });
});
