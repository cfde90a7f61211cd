import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../platform/config.js';
import { ElasticsearchSearchIndex } from '../../readmodels/search/elasticsearch.js';
import { createSearchIndex } from '../../readmodels/search/index.js';
import { PostgresSearchIndex } from '../../readmodels/search/postgres.js';
import { testDb } from '../support/db.js';
import { testElasticsearchUrl } from './support.js';

describe('search engine configuration', () => {
  it('defaults to PostgreSQL', async () => {
    const config = loadConfig({});
    expect(config.search).to.deep.equal({ engine: 'postgres', elasticsearchUrl: null, elasticsearchIndexPrefix: 'einvoicing' });
    const index = createSearchIndex(config, testDb().knex);
    expect(index).to.be.instanceOf(PostgresSearchIndex);
    expect(index.engine).to.equal('postgres');
    await index.close();
  });

  it('chooses Elasticsearch with SEARCH_ENGINE=elasticsearch and ELASTICSEARCH_URL', async () => {
    const config = loadConfig({ SEARCH_ENGINE: 'elasticsearch', ELASTICSEARCH_URL: 'http://127.0.0.1:1', ELASTICSEARCH_INDEX_PREFIX: 'acme-prod' });
    const index = createSearchIndex(config, testDb().knex);
    expect(index).to.be.instanceOf(ElasticsearchSearchIndex);
    expect((index as ElasticsearchSearchIndex).aliases).to.deep.equal({ sales: 'acme-prod-search-sales', purchases: 'acme-prod-search-purchases', receipts: 'acme-prod-search-receipts' });
    await index.close();
  });

  it('refuses an unknown engine, Elasticsearch without a URL, a malformed URL or prefix', () => {
    expect(() => loadConfig({ SEARCH_ENGINE: 'solr' })).to.throw(ConfigError, /SEARCH_ENGINE/);
    expect(() => loadConfig({ SEARCH_ENGINE: 'elasticsearch' })).to.throw(ConfigError, /ELASTICSEARCH_URL/);
    expect(() => loadConfig({ ELASTICSEARCH_URL: 'localhost:9200' })).to.throw(ConfigError, /ELASTICSEARCH_URL/);
    expect(() => loadConfig({ ELASTICSEARCH_INDEX_PREFIX: 'Has Spaces' })).to.throw(ConfigError, /ELASTICSEARCH_INDEX_PREFIX/);
  });

  it('makes the Elasticsearch suites fail under CI=true without a node, and skip otherwise', async () => {
    const nowhere = 'http://127.0.0.1:1';
    await testElasticsearchUrl({ CI: 'true', ELASTICSEARCH_URL: nowhere }).then(
      () => expect.fail('should have thrown'),
      (err: Error) => expect(err.message).to.match(/CI=true but no Elasticsearch/),
    );
    await testElasticsearchUrl({ CI: 'true' }).then(
      () => expect.fail('should have thrown'),
      (err: Error) => expect(err.message).to.match(/ELASTICSEARCH_URL \(unset\)/),
    );
    expect(await testElasticsearchUrl({ ELASTICSEARCH_URL: nowhere })).to.equal(null);
    expect(await testElasticsearchUrl({})).to.equal(null);
  });
});
