/**
 * Migration 0151: the index of receipts' `countryDocumentStatus` (on the search states) holds the
 * receipts' rows alone. The other types' state rows get no entry there when written or rewritten;
 * the receipts' queries on the field use the index as before and answer the same; down puts the
 * index over every row back.
 */
import { expect } from 'chai';
import type { Knex } from 'knex';
import { searchPartialIndexesMigration } from '../../readmodels/migrations/0151_search_partial_indexes.js';
import { migrateToLatest } from '../../readmodels/migrations/index.js';
import type { IndexWrite, SearchQuery } from '../../readmodels/search/port.js';
import { PostgresSearchIndex, searchIndexDefinitions } from '../../readmodels/search/postgres.js';
import { openDatabaseBefore } from '../support/db.js';
import { makeDocument, newScope, query } from './contract.js';

const INDEX = 'search_country_document_status_asc';

describe('the receipts-only index of countryDocumentStatus (migration 0151)', function () {
  this.timeout(120000);
  let own: Awaited<ReturnType<typeof openDatabaseBefore>>;
  let knex: Knex;

  before(async () => {
    own = await openDatabaseBefore('searchpartial', searchPartialIndexesMigration);
    knex = own.knex;
  });
  after(() => own?.drop());

  /** The index's entries, as a build of it counts them (the rows a rewrite left dead are not counted). */
  const entries = async () => {
    await knex.raw(`reindex index ${INDEX}`);
    const { rows } = await knex.raw(`select reltuples::int as n from pg_class where relname = ?`, [INDEX]);
    return rows[0].n as number;
  };
  const definition = async () => (await knex.raw(`select indexdef from pg_indexes where indexname = ?`, [INDEX])).rows[0].indexdef as string;
  /** The plan's index names of a query's page, with sequential scans off (does the query shape reach the index at all?). */
  const pageIndexes = async (index: PostgresSearchIndex, q: SearchQuery) => {
    const statements: { sql: string; bindings: readonly unknown[] }[] = [];
    const onQuery = (s: { sql: string; bindings?: unknown[] }) => statements.push({ sql: s.sql, bindings: s.bindings ?? [] });
    knex.on('query', onQuery);
    try {
      await index.search(q);
    } finally {
      knex.off('query', onQuery);
    }
    const page = statements.find((s) => !/count\(\*\)/.test(s.sql))!;
    return knex.transaction(async (trx) => {
      await trx.raw('set local enable_seqscan = off');
      const { rows } = await trx.raw(`explain (format json) ${page.sql.replace(/\$(\d+)/g, '?')}`, page.bindings as Knex.Value[]);
      return JSON.stringify(rows[0]['QUERY PLAN']).match(/"Index Name":"[a-z_]+"/g)?.map((m: string) => m.slice(14, -1)) ?? [];
    });
  };

  it('keeps the receipts alone, answers their queries on the field the same through it, and down restores the index over every row', async () => {
    const index = new PostgresSearchIndex(knex);
    const scope = newScope();
    const write = (docs: readonly IndexWrite[]) => knex.transaction((trx) => index.write(trx, docs));
    const receipts = [makeDocument(scope, 'receipts', { fields: { countryDocumentStatus: 'NOT_ISSUED' } }), makeDocument(scope, 'receipts')];
    await write([makeDocument(scope, 'sales'), makeDocument(scope, 'purchases'), ...receipts]);
    expect(await entries()).to.equal(4);
    expect(await definition()).to.not.include('WHERE');
    const filtered = query(scope, 'receipts', { filters: [{ field: 'countryDocumentStatus', values: ['issued'] }] });
    const sorted = query(scope, 'receipts', { sort: { field: 'countryDocumentStatus', order: 'desc' } });
    const answers = async () => [await index.search(filtered), await index.search(sorted)];
    const before = await answers();
    expect(before[0]!.documents.map((d) => d.documentId)).to.deep.equal([receipts[1]!.documentId]);
    expect(before[1]!.documents.map((d) => d.documentId)).to.deep.equal([receipts[0]!.documentId, receipts[1]!.documentId]);

    await migrateToLatest(knex);
    expect(await definition()).to.include("WHERE (type = 'receipts'::text)");
    expect(await entries()).to.equal(2);
    expect(await answers()).to.deep.equal(before);
    expect(await pageIndexes(index, filtered)).to.include(INDEX);
    expect(await pageIndexes(index, sorted)).to.include(INDEX);
    // A sales document and a purchase written, and the sale's state rewritten, are not in it.
    const sale = makeDocument(scope, 'sales');
    await write([sale, makeDocument(scope, 'purchases')]);
    await write([{ ...makeDocument(scope, 'sales', { documentId: sale.documentId, fields: { 'meta.statuses.userfacing': 'Processing' } }), version: 2n }]);
    expect(await entries()).to.equal(2);
    // The catalogue's definition is the migration's.
    const def = searchIndexDefinitions().find((d) => d.name === INDEX)!;
    expect(def.definition).to.match(/ where type = 'receipts'$/);

    await searchPartialIndexesMigration.down(knex);
    expect(await definition()).to.not.include('WHERE');
    expect(await entries()).to.equal(6);
    expect(await answers()).to.deep.equal(before);
  });
});
