/**
 * The search-index contract against the PostgreSQL adapter, and what only that adapter
 * promises: the migration's indexes match the catalogue, the planner uses them, and the
 * generic rebuild (fresh tables + swap) works because writes go through the runner's
 * transaction with an unqualified table name.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { QUERY_TYPES } from '../../domain/query/fields.js';
import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import type { EventStore, RecordedEvent } from '../../platform/eventstore/port.js';
import { defineProjection } from '../../projections/projection.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { ProjectionRunner } from '../../projections/runner.js';
import type { IndexedDocument } from '../../readmodels/search/port.js';
import {
  escapeLike,
  PostgresSearchIndex,
  SEARCH_STATES_TABLE,
  SEARCH_TABLE,
  SEARCH_TABLES,
  searchCondition,
  searchIndexDefinitions,
  storedValueColumns,
  valueExpression,
} from '../../readmodels/search/postgres.js';
import { newEvent } from '../eventstore/contract.js';
import { testDb } from '../support/db.js';
import { makeDocument, newScope, query, searchIndexContract, writeDocuments } from './contract.js';
import { queryArbitrary } from './generators.js';
import { setAsideSearchRows } from './set-aside.js';

searchIndexContract('postgres', async () => ({ index: new PostgresSearchIndex(testDb().knex), close: async () => {} }), {
  skipReason: 'never skipped',
});

describe('PostgreSQL search index', function () {
  this.timeout(60_000);

  it('has every index the catalogue asks for, on the table holding its field', async () => {
    for (const table of SEARCH_TABLES) {
      const { rows } = await testDb().knex.raw(`select indexname from pg_indexes where schemaname = 'public' and tablename = ?`, [table]);
      const names = new Set(rows.map((r: { indexname: string }) => r.indexname));
      const defs = searchIndexDefinitions().filter((d) => d.table === table);
      for (const def of defs) expect(names.has(def.name), def.name).to.equal(true);
      expect(names.size, table).to.equal(defs.length + 1);
    }
    // The state's indexes are its statuses' (receipts' countryDocumentStatus among them).
    expect(searchIndexDefinitions().filter((d) => d.table === SEARCH_STATES_TABLE).map((d) => d.name)).to.deep.equal([
      'search_country_document_status_asc',
      'search_meta_statuses_business_current_asc',
      'search_meta_statuses_delivery_current_asc',
      'search_meta_statuses_document_current_asc',
      'search_meta_statuses_userfacing_asc',
    ]);
  });

  it('stores each scalar field of the catalogue in a generated column, which its btree indexes cover', async () => {
    const { rows } = await testDb().knex.raw(
      `select table_name, column_name, is_generated from information_schema.columns where table_schema = 'public' and table_name in (?, ?) and column_name like 'sv\\_%'`,
      [SEARCH_TABLE, SEARCH_STATES_TABLE],
    );
    const generated = new Map(rows.map((r: { table_name: string; column_name: string; is_generated: string }) => [`${r.table_name}.${r.column_name}`, r.is_generated]));
    expect([...generated.keys()].sort()).to.deep.equal(storedValueColumns().map((c) => `${c.table}.${c.name}`).sort());
    for (const c of storedValueColumns()) expect(generated.get(`${c.table}.${c.name}`), c.name).to.equal('ALWAYS');
    const { rows: indexes } = await testDb().knex.raw(`select indexname, indexdef from pg_indexes where schemaname = 'public' and tablename in (?, ?)`, [SEARCH_TABLE, SEARCH_STATES_TABLE]);
    const defs = new Map(indexes.map((r: { indexname: string; indexdef: string }) => [r.indexname, r.indexdef]));
    for (const d of searchIndexDefinitions().filter((x) => x.definition.startsWith('btree'))) {
      const column = /sv_[a-z_]+/.exec(d.definition)![0];
      expect(defs.get(d.name), d.name).to.include(column);
    }
  });

  it('scopes every statement of every query by workspace, environment and type in SQL', async () => {
    const knex = testDb().knex;
    const index = new PostgresSearchIndex(knex);
    const statements: { sql: string; bindings: readonly unknown[] }[] = [];
    const onQuery = (q: { sql: string; bindings?: unknown[] }) => {
      if (q.sql.includes(SEARCH_TABLE)) statements.push({ sql: q.sql, bindings: q.bindings ?? [] });
    };
    const scope = newScope('production');
    await writeDocuments(index, [makeDocument(scope, 'sales'), makeDocument(scope, 'purchases'), makeDocument(scope, 'receipts')]);
    knex.on('query', onQuery);
    try {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...QUERY_TYPES).chain((type) => queryArbitrary(scope, type)), async (q) => {
          statements.length = 0;
          await index.search(q);
          expect(statements.length).to.be.within(1, 2);
          for (const s of statements) {
            expect(s.sql).to.match(/ where "workspace_id" = \$1 and "environment" = \$2 and "type" = \$3( and |$| order by)/);
            expect(s.bindings.slice(0, 3)).to.deep.equal([q.workspaceId, q.environment, q.type]);
          }
        }),
        { numRuns: 150 },
      );
    } finally {
      knex.off('query', onQuery);
    }
  });

  it('escapes LIKE wildcards', () => {
    expect(escapeLike('a%b_c\\d')).to.equal('a\\%b\\_c\\\\d');
  });

  it('plans the common queries on the indexes (no scan of the whole table)', async () => {
    const knex = testDb().knex;
    const scope = newScope();
    await writeDocuments(
      new PostgresSearchIndex(knex),
      Array.from({ length: 300 }, (_, i) =>
        makeDocument(newScope(), 'sales', { fields: { 'parties.seller.name': `Seller ${i}`, 'totals.totalAmountIncludingTax': i } }),
      ),
    );
    await knex.raw(`analyze ${SEARCH_TABLE}`);
    const index = new PostgresSearchIndex(knex);
    const seen: { sql: string; bindings: readonly Knex.RawBinding[] }[] = [];
    const onQuery = (q: { sql: string; bindings?: Knex.RawBinding[] }) => {
      // knex reports the SQL with $n placeholders, numbered in order.
      if (q.sql.includes(`from "${SEARCH_TABLE}"`)) seen.push({ sql: q.sql.replace(/\$\d+/g, '?'), bindings: q.bindings ?? [] });
    };
    knex.on('query', onQuery);
    try {
      await index.search(query(scope, 'sales', { filters: [{ field: 'coreDocument.header.issueDate', range: { gte: '2025-01-01', lte: '2025-01-31' } }] }));
      await index.search(query(scope, 'sales', { searches: [{ field: 'coreDocument.parties.seller.name', term: 'seller 12' }] }));
      await index.search(query(scope, 'sales', { sort: { field: 'coreDocument.totals.totalAmountIncludingTax', order: 'asc' } }));
      await index.search(query(scope, 'sales', { filters: [{ field: 'documentType.modifiers', values: ['export'] }] }));
    } finally {
      knex.off('query', onQuery);
    }
    expect(seen.length).to.equal(8);
    const plans: string[] = [];
    await knex.transaction(async (trx) => {
      await trx.raw('set local enable_seqscan = off');
      const explain = async (sql: string, bindings: readonly Knex.RawBinding[]) => {
        const plan = (await trx.raw(`explain ${sql}`, bindings)).rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
        if (process.env.SHOW_PLANS) console.log(plan);
        return plan;
      };
      for (const { sql, bindings } of seen) plans.push(await explain(sql, bindings));
      // The conditions alone, unscoped, so that only their own index can serve them.
      plans.push(await explain(`select 1 from ${SEARCH_TABLE} where ${searchCondition('parties.seller.name')}`, ['seller 12']));
      plans.push(await explain(`select 1 from ${SEARCH_TABLE} where ${valueExpression({ kind: 'keyword', multi: true }, 'documentType.modifiers')} && ?::text[]`, [['export']]));
    });
    for (const plan of plans) expect(plan).not.to.match(/Seq Scan/);
    // The date range is an index condition on the issue-date index (over its stored column), and
    // the page's keys come from the index alone.
    expect(plans[0]).to.match(/Index Only Scan using search_header_issue_date_(desc|asc)[\s\S]*Index Cond:[\s\S]*'2025-01-01'/);
    // A sort by amount walks the amount index in the query's order (no sort step).
    expect(plans[4]).to.match(/Index (Only )?Scan using search_totals_total_amount_including_tax_asc/);
    expect(plans[4]).not.to.match(/Sort/);
    expect(plans[8]).to.match(/search_parties_seller_name_trgm/);
    expect(plans[9]).to.match(/search_document_type_modifiers/);
  });

  it('is rebuilt by the generic rebuild into fresh tables, then swapped in', async () => {
    const knex = testDb().knex;
    let restore = async () => {};
    const store: EventStore = await PostgresEventStore.connect(testDb().url, { poolSize: 5 });
    try {
      const scope = newScope();
      const index = new PostgresSearchIndex(knex);
      // A projection indexing `Search.Test` events through the adapter, one write per batch.
      const toDocument = (e: RecordedEvent): IndexedDocument => {
        const data = e.data as { id: string; status: string };
        return makeDocument(scope, 'sales', {
          documentId: data.id,
          version: e.revision + 1n,
          fields: { 'meta.statuses.document.current': data.status },
        });
      };
      const projection = defineProjection({
        name: `search_test_${randomUUID().slice(0, 8)}`,
        version: 1,
        tables: SEARCH_TABLES,
        eventTypes: new Set(['Search.Test']),
        apply: (trx, e) => index.write(trx, [toDocument(e)]),
        applyMany: (trx, events) => index.write(trx, events.map(toDocument)),
      });
      for (let i = 0; i < 20; i++) {
        const stream = `searchtest-${scope.workspaceId}-${i}`;
        await store.append(stream, [newEvent('Search.Test', { id: `d${i}`, status: 'PROCESSING' })], 'no_stream');
        if (i % 2 === 0) await store.append(stream, [newEvent('Search.Test', { id: `d${i}`, status: 'COMPLIANT' })], 0n);
      }
      const runner = new ProjectionRunner(knex, store, [projection], { batchSize: 7 });
      await runner.init();
      await runner.catchUp();
      const compliant = () => index.search(query(scope, 'sales', { filters: [{ field: 'coreDocument.meta.statuses.document.current', values: ['compliant'] }] }));
      expect((await compliant()).total).to.equal(10);

      // The rebuilt tables hold only what this projection's events give: the rows other suites
      // of this process wrote are set aside and put back afterwards.
      const total = async () => Number((await knex(SEARCH_TABLE).count({ n: '*' }))[0]!.n);
      const before = await total();
      restore = await setAsideSearchRows(knex, 'search_rebuild_test_keep', { exceptWorkspace: scope.workspaceId });
      let liveAnswered = 0;
      await rebuildProjection(knex, store, projection, {
        batchSize: 6,
        onProgress: async (p) => {
          if (p.phase === 'copying' && (await compliant()).total === 10) liveAnswered++;
        },
      });
      expect(liveAnswered).to.be.greaterThan(0);
      expect((await compliant()).total).to.equal(10);
      expect((await index.search(query(scope, 'sales'))).total).to.equal(20);
      for (const table of SEARCH_TABLES) {
        expect(Number((await knex(table).count({ n: '*' }))[0]!.n), table).to.equal(20);
        const { rows } = await knex.raw(`select count(*)::int as n from pg_indexes where schemaname = 'public' and tablename = ?`, [table]);
        expect(rows[0].n, table).to.equal(searchIndexDefinitions().filter((d) => d.table === table).length + 1);
      }
      // The rows set aside are back beside the rebuilt ones.
      await restore();
      restore = async () => {};
      expect(await total()).to.equal(before);
    } finally {
      await restore();
      await store.close();
    }
  });
});
