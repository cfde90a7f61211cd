/**
 * The search-index contract against the Elasticsearch adapter, what only that adapter
 * promises (mappings, the scope in every query, bulk failures, the rebuild hook), and the
 * property that both engines answer every query alike. Needs ELASTICSEARCH_URL (see
 * test/search/support.ts); without it: "skipped: no Elasticsearch"; with CI=true: a failure.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { QUERY_TYPES, queryFields, type QueryType } from '../../domain/query/fields.js';
import {
  buildSearchRequest,
  ElasticsearchSearchIndex,
  ElasticsearchWriteError,
  escapeWildcard,
  mappingFor,
  SCOPE_ENVIRONMENT,
  SCOPE_WORKSPACE,
} from '../../readmodels/search/elasticsearch.js';
import type { IndexedDocument, SearchFilter, SearchQuery, SearchSort, SearchTerm } from '../../readmodels/search/port.js';
import { PostgresSearchIndex } from '../../readmodels/search/postgres.js';
import { testDb } from '../support/db.js';
import { makeDocument, newScope, query, searchIndexContract, writeDocuments, type Scope } from './contract.js';
import { NO_ELASTICSEARCH, openTestElasticsearch, requireElasticsearch } from './support.js';

searchIndexContract(
  'elasticsearch',
  async () => {
    const index = await openTestElasticsearch();
    return index && { index, close: async () => (await index.dropAll(), await index.close()) };
  },
  { skipReason: NO_ELASTICSEARCH, requireEngine: requireElasticsearch },
);

import { fieldsArbitrary, queryArbitrary, queryPartsArbitrary } from './generators.js';

const SCOPE_TERMS = (q: SearchQuery) => [{ term: { [SCOPE_WORKSPACE]: q.workspaceId } }, { term: { [SCOPE_ENVIRONMENT]: q.environment } }];

describe('Elasticsearch adapter, without a node', () => {
  it('maps the catalogue explicitly, dynamic: false, the document in _source only', () => {
    for (const type of QUERY_TYPES) {
      const mapping = mappingFor(type);
      expect(mapping.dynamic).to.equal(false);
      expect(mapping.properties!.document).to.deep.equal({ type: 'object', enabled: false });
      for (const f of queryFields(type)) {
        let at: any = { properties: mapping.properties };
        for (const s of f.path.split('.')) at = at.properties[s];
        expect(at.type, f.path).to.equal(f.kind === 'date' ? 'date' : f.kind === 'number' ? 'double' : 'keyword');
        if (at.type === 'keyword') expect(at.normalizer, f.path).to.equal('lowercase');
      }
    }
  });

  it('escapes the wildcard characters of a search term', () => {
    expect(escapeWildcard('a*b?c\\d%_')).to.equal('a\\*b\\?c\\\\d%_');
  });

  it('builds every query with the workspace and the environment as filter clauses', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...QUERY_TYPES).chain((type) => queryArbitrary({ workspaceId: `ws_${randomUUID()}`, environment: 'production' }, type)),
        (q) => {
          const request = buildSearchRequest('any', q);
          const bool = (request.query as { bool: { filter: unknown[] } }).bool;
          expect(Object.keys(request.query!)).to.deep.equal(['bool']);
          expect(Object.keys(bool)).to.deep.equal(['filter']);
          expect(bool.filter.slice(0, 2)).to.deep.equal(SCOPE_TERMS(q));
        },
      ),
      { numRuns: 300 },
    );
  });

});

describe('Elasticsearch search index', function () {
  this.timeout(120_000);
  let es: ElasticsearchSearchIndex;

  before(async function () {
    const opened = await openTestElasticsearch();
    if (!opened) {
      console.log(`      skipped: ${NO_ELASTICSEARCH}`);
      this.skip();
    }
    es = opened!;
  });
  after(async () => {
    if (es) {
      await es.dropAll();
      await es.close();
    }
  });

  it('maps only the catalogued fields (dynamic: false); payload fields stay in _source', async () => {
    const scope = newScope();
    const doc = makeDocument(scope, 'sales', { fields: { 'extensions.brandNewField': 'x', 'header.somethingNew': 12 } });
    await writeDocuments(es, [doc]);
    const live = await es.client.indices.getMapping({ index: es.aliases.sales });
    const mapping = Object.values(live)[0]!.mappings;
    expect(mapping.dynamic).to.equal('false');
    const header = (mapping.properties!.coreDocument as any).properties.header.properties;
    expect(Object.keys(header).sort()).to.deep.equal(['currency', 'documentNumber', 'issueDate']);
    expect(header.currency).to.deep.include({ type: 'keyword', normalizer: 'lowercase' });
    expect(header.issueDate).to.deep.include({ type: 'date', format: 'strict_date' });
    expect((mapping.properties!.coreDocument as any).properties.extensions).to.equal(undefined);
    expect((await es.search(query(scope, 'sales'))).documents).to.deep.equal([doc.document]);
  });

  it('sends no search to the cluster without the scope filter', async () => {
    const searches: { path: string; body: any }[] = [];
    const onRequest = (_err: unknown, result: any) => {
      const params = result?.meta?.request?.params;
      if (params && /_search|_count|_msearch/.test(params.path)) {
        searches.push({ path: params.path, body: typeof params.body === 'string' ? JSON.parse(params.body) : params.body });
      }
    };
    es.client.diagnostic.on('request', onRequest);
    try {
      const scope = newScope();
      await writeDocuments(es, [makeDocument(scope, 'sales'), makeDocument(scope, 'receipts')]);
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...QUERY_TYPES).chain((type) => queryArbitrary(scope, type)), async (q) => {
          await es.search(q);
        }),
        { numRuns: 40 },
      );
    } finally {
      es.client.diagnostic.off('request', onRequest);
    }
    expect(searches.length).to.be.at.least(40);
    for (const s of searches) {
      const filter = s.body.query.bool.filter as unknown[];
      expect(JSON.stringify(filter[0])).to.match(/^\{"term":\{"scope\.workspaceId":"ws_/);
      expect(JSON.stringify(filter[1])).to.match(/^\{"term":\{"scope\.environment":"sandbox"\}\}$/);
    }
  });

  it('fails the batch on any error other than a version conflict', async () => {
    const scope = newScope();
    await writeDocuments(es, [makeDocument(scope, 'purchases', { documentId: 'p1', version: 5n })]);
    // Stale: a version conflict, ignored.
    await writeDocuments(es, [makeDocument(scope, 'purchases', { documentId: 'p1', version: 4n })]);
    const [index] = (await es.liveIndices()).purchases;
    await es.client.indices.putSettings({ index: index!, settings: { 'index.blocks.write': true } });
    try {
      let failed: unknown = null;
      await writeDocuments(es, [makeDocument(scope, 'purchases', { documentId: 'p2' })]).catch((err) => (failed = err));
      expect(failed).to.be.instanceOf(ElasticsearchWriteError);
      expect((failed as Error).message).to.match(/cluster_block_exception/);
    } finally {
      await es.client.indices.putSettings({ index: index!, settings: { 'index.blocks.write': null as unknown as boolean } });
    }
  });

  it('cuts a large batch into bulk requests by bytes, side by side; the write resolves once all are searchable, and any failure fails it', async () => {
    const small = (await openTestElasticsearch({ bulk: { maxBytes: 4096, concurrency: 2 } }))!;
    const bulks: number[] = [];
    const onRequest = (_err: unknown, result: any) => {
      const params = result?.meta?.request?.params;
      if (params && /_bulk/.test(params.path)) bulks.push(String(params.bulkBody ?? params.body).split('\n').filter(Boolean).length / 2);
    };
    small.client.diagnostic.on('request', onRequest);
    try {
      const scope = newScope();
      const docs = Array.from({ length: 40 }, (_, i) => makeDocument(scope, i % 2 ? 'sales' : 'receipts', { documentId: `d${String(i).padStart(2, '0')}` }));
      await writeDocuments(small, docs);
      expect(bulks.length).to.be.greaterThan(2);
      expect(bulks.reduce((a, b) => a + b, 0)).to.equal(40);
      // Searchable as soon as the write resolved (the refresh after the requests).
      const found = [...(await small.search(query(scope, 'sales'))).documents, ...(await small.search(query(scope, 'receipts'))).documents];
      expect(found.map((d) => d.documentId).sort()).to.deep.equal(docs.map((d) => d.documentId).sort());
      // A failure in any one of the requests fails the whole write.
      const [receipts] = (await small.liveIndices()).receipts;
      await small.client.indices.putSettings({ index: receipts!, settings: { 'index.blocks.write': true } });
      try {
        let failed: unknown = null;
        await writeDocuments(small, docs.map((d) => ({ ...d, version: d.version + 1n }))).catch((err) => (failed = err));
        expect(failed).to.be.instanceOf(ElasticsearchWriteError);
      } finally {
        await small.client.indices.putSettings({ index: receipts!, settings: { 'index.blocks.write': null as unknown as boolean } });
      }
    } finally {
      small.client.diagnostic.off('request', onRequest);
      await small.dropAll();
      await small.close();
    }
  });

  it('skips the refresh of a write whose documents need not be searchable at once (a catch-up), and refreshes otherwise', async () => {
    const requests: { path: string; refresh: boolean }[] = [];
    const onRequest = (_err: unknown, result: any) => {
      const params = result?.meta?.request?.params;
      if (params) requests.push({ path: String(params.path), refresh: /refresh=true/.test(String(params.querystring ?? '')) });
    };
    es.client.diagnostic.on('request', onRequest);
    try {
      const scope = newScope();
      const docs = [makeDocument(scope, 'sales', { documentId: 'behind1' }), makeDocument(scope, 'receipts', { documentId: 'behind2' })];
      await testDb().knex.transaction((trx) => es.write(trx, docs, { searchableAtOnce: false }));
      expect(requests.filter((r) => /_bulk/.test(r.path))).to.have.length(1);
      expect(requests.some((r) => r.refresh || /_refresh/.test(r.path)), 'no refresh').to.equal(false);
      requests.length = 0;
      await testDb().knex.transaction((trx) => es.write(trx, docs.map((d) => ({ ...d, version: d.version + 1n }))));
      expect(requests.filter((r) => /_bulk/.test(r.path) && r.refresh)).to.have.length(1);
      // The next refreshing write made the earlier ones searchable too.
      const found = [...(await es.search(query(scope, 'sales'))).documents, ...(await es.search(query(scope, 'receipts'))).documents];
      expect(found.map((d) => d.documentId).sort()).to.deep.equal(['behind1', 'behind2']);
    } finally {
      es.client.diagnostic.off('request', onRequest);
    }
  });

  it('rebuilds into fresh indices while the live ones answer, then swaps the aliases in one step', async () => {
    const scope = newScope();
    await writeDocuments(es, [makeDocument(scope, 'sales', { documentId: 'old-1' }), makeDocument(scope, 'receipts', { documentId: 'old-r' })]);
    const before = await es.liveIndices();
    const rebuild = await es.beginRebuild();
    await writeDocuments(rebuild.index, [
      makeDocument(scope, 'sales', { documentId: 'new-1', version: 2n }),
      makeDocument(scope, 'sales', { documentId: 'new-1', version: 1n }),
      makeDocument(scope, 'sales', { documentId: 'new-2' }),
    ]);
    // The live index still answers with the old state; the fresh one holds the rebuilt state.
    const ids = async (index: { search(q: SearchQuery): Promise<{ documents: readonly Record<string, unknown>[] }> }, type: QueryType) =>
      (await index.search(query(scope, type, { sort: { field: 'documentId', order: 'asc' } }))).documents.map((d) => d.documentId);
    expect(await ids(es, 'sales')).to.deep.equal(['old-1']);
    expect(await ids(rebuild.index, 'sales')).to.deep.equal(['new-1', 'new-2']);
    await rebuild.complete();
    expect(await ids(es, 'sales')).to.deep.equal(['new-1', 'new-2']);
    expect(await ids(es, 'receipts')).to.deep.equal([]);
    const after = await es.liveIndices();
    for (const type of QUERY_TYPES) {
      expect(after[type]).to.have.length(1);
      expect(after[type][0]).not.to.equal(before[type][0]);
    }
    const remaining = Object.keys(await es.client.indices.get({ index: `${es.aliases.sales}-*` }));
    expect(remaining).to.deep.equal(after.sales);
    // The live index takes writes again, with refresh (read-your-writes).
    await writeDocuments(es, [makeDocument(scope, 'sales', { documentId: 'new-3' })]);
    expect(await ids(es, 'sales')).to.deep.equal(['new-1', 'new-2', 'new-3']);
    // An abandoned rebuild's indices are dropped by the next one.
    const abandoned = await es.beginRebuild();
    await writeDocuments(abandoned.index, [makeDocument(scope, 'sales')]);
    const next = await es.beginRebuild();
    await next.complete();
    expect(Object.keys(await es.client.indices.get({ index: `${es.aliases.sales}-*` }))).to.have.length(1);
  });

  it('answers every query as PostgreSQL does: same documents, same order, same total, never another scope', async () => {
    const pg = new PostgresSearchIndex(testDb().knex);
    let compared = 0;
    let nonEmpty = 0;
    const docSpecs = (type: QueryType) =>
      fc.array(fieldsArbitrary(type).map((fields) => ({ fields })), { minLength: 0, maxLength: 30 });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...QUERY_TYPES).chain((type) =>
          fc.record({ type: fc.constant(type), specs: docSpecs(type), queries: fc.array(queryPartsArbitrary(type), { minLength: 6, maxLength: 6 }) }),
        ),
        async ({ type, specs, queries }) => {
          const scope = newScope('sandbox');
          const others = [{ ...scope, environment: 'production' }, newScope('sandbox')];
          const documents: IndexedDocument[] = [];
          // The same document ids in the other scopes, with the same contents, so a leak would show.
          for (const s of [scope, ...others]) {
            specs.forEach((spec, i) => {
              const doc = makeDocument(s, type, { documentId: i % 7 === 6 ? `D${i}` : `d${i}`, fields: spec.fields });
              (doc.document as Record<string, unknown>).scopeMarker = `${s.workspaceId}/${s.environment}`;
              documents.push(doc);
            });
          }
          await writeDocuments(pg, documents);
          await writeDocuments(es, documents);
          for (const parts of queries) {
            const q: SearchQuery = { ...scope, type, ...parts };
            const [a, b] = await Promise.all([pg.search(q), es.search(q)]);
            const label = JSON.stringify(q);
            expect(b.documents.map((d) => d.documentId), label).to.deep.equal(a.documents.map((d) => d.documentId));
            expect(b.total, label).to.equal(a.total);
            expect(b.documents, label).to.deep.equal(a.documents);
            for (const d of b.documents) expect(d.scopeMarker, label).to.equal(`${scope.workspaceId}/${scope.environment}`);
            compared++;
            if (b.documents.length > 0) nonEmpty++;
          }
        },
      ),
      { numRuns: Number(process.env.SEARCH_PROPERTY_RUNS || 25) },
    );
    // Not vacuous: a good share of the random queries find documents.
    if (process.env.SHOW_PLANS) console.log(`${nonEmpty} of ${compared} queries found documents`);
    expect(nonEmpty, `${nonEmpty} of ${compared} queries found documents`).to.be.greaterThan(compared / 4);
  });
});
