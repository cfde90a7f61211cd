/**
 * Migration 0147: on a server built without lz4 the search index's bodies are stored out of line
 * without compression instead of compressed with pglz; on a server with lz4 they stay compressed
 * with lz4. The bodies stored before the migration stay as they are and are answered as before;
 * `rebuild -- search` rewrites them in the new way.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import type { NewEvent } from '../../platform/eventstore/port.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { searchProjection } from '../../projections/search.js';
import { searchBodyStorageMigration } from '../../readmodels/migrations/0147_search_body_storage.js';
import { migrateToLatest } from '../../readmodels/migrations/index.js';
import type { SearchQuery } from '../../readmodels/search/port.js';
import { PostgresSearchIndex, SEARCH_TABLE, SEARCH_TABLES } from '../../readmodels/search/postgres.js';
import { newEvent } from '../eventstore/contract.js';
import { openEventStoreBefore } from '../support/db.js';
import { receivedDocumentData } from '../support/sales-documents.js';

const WORKSPACE = 'ws_searchbody';

describe('search bodies without pglz (migration 0147)', function () {
  this.timeout(120000);
  let own: Awaited<ReturnType<typeof openEventStoreBefore>>;
  let knex: Knex;
  let store: PostgresEventStore;

  before(async () => {
    own = await openEventStoreBefore('searchbody', searchBodyStorageMigration);
    ({ knex, store } = own);
  });
  after(() => own?.drop());

  /** A document whose body is well over the size PostgreSQL compresses or moves out of line (2 KB). */
  const submitted = (id: string): NewEvent => {
    const lines = Array.from({ length: 40 }, (_, i) => ({ id: String(i + 1), item: { name: `Line ${i + 1} of ${id}`, description: 'Consulting services, per hour' }, quantity: 1, price: 100 }));
    const e = newEvent('DocumentSubmitted', {
      ...receivedDocumentData(id, {
        number: `SB-${id.slice(0, 8)}`,
        coreDocument: { header: { documentNumber: `SB-${id.slice(0, 8)}`, issueDate: '2026-03-01', currency: 'AED' }, parties: { seller: { name: 'Seller' } }, lines },
      }),
      xmlBase64: null,
    });
    return { ...e, metadata: { ...e.metadata, workspaceId: WORKSPACE } };
  };
  const query: SearchQuery = { workspaceId: WORKSPACE, environment: 'sandbox', type: 'sales', filters: [], searches: [], sort: { field: 'documentId', order: 'asc' }, offset: 0, limit: 100 };
  /** How each stored body is compressed (`pglz`, `lz4`, or null: not compressed), by document. */
  const compression = async () => {
    const { rows } = await knex.raw(`select document_id, pg_column_compression(document) as c, length(document) as n from ${SEARCH_TABLE} order by document_id`);
    return Object.fromEntries((rows as { document_id: string; c: string | null; n: number }[]).map((r) => [r.document_id, r.c]));
  };

  it('stores new bodies uncompressed without lz4 (lz4 with it), answers the old ones as before, and a rebuild rewrites them', async () => {
    const { rows } = await knex.raw(`select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`);
    const lz4 = rows[0].lz4 as boolean;
    const index = new PostgresSearchIndex(knex);
    // As the service builds it: the index's tables are the projection's, rebuilt with its facts.
    const projection = searchProjection(index, { indexTables: SEARCH_TABLES });
    const [oldId, newId] = ['a-old', 'b-new'].map((p) => `${p}-${randomUUID()}`) as [string, string];

    await store.append(`document-${oldId}`, [submitted(oldId)], 'no_stream');
    await new ProjectionRunner(knex, store, [projection]).catchUp();
    const before = await index.search(query);
    expect(before.documents.map((d) => d.documentId)).to.deep.equal([oldId]);
    const compressed = lz4 ? 'lz4' : 'pglz';
    expect(await compression()).to.deep.equal({ [oldId]: compressed });

    await migrateToLatest(knex);
    // The body stored before is answered as it was; a body stored after is not compressed with pglz.
    expect(await index.search(query)).to.deep.equal(before);
    await store.append(`document-${newId}`, [submitted(newId)], 'no_stream');
    await new ProjectionRunner(knex, store, [projection]).catchUp();
    const after = await index.search(query);
    expect(after.documents.map((d) => d.documentId)).to.deep.equal([oldId, newId]);
    expect(after.documents[0]).to.deep.equal(before.documents[0]);
    const stored = lz4 ? 'lz4' : null;
    expect(await compression()).to.deep.equal({ [oldId]: compressed, [newId]: stored });

    // The rebuild writes every body the new way, and the answers stay the same.
    await rebuildProjection(knex, store, projection);
    expect(await compression()).to.deep.equal({ [oldId]: stored, [newId]: stored });
    expect(await index.search(query)).to.deep.equal(after);

    // Down: compressed again from then on.
    await searchBodyStorageMigration.down(knex);
    const { rows: storage } = await knex.raw(`select attstorage from pg_attribute where attrelid = 'search_documents'::regclass and attname = 'document'`);
    expect(storage[0].attstorage).to.equal('x');
    await searchBodyStorageMigration.up(knex);
  });
});
