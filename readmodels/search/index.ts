/**
 * The search index the service uses, chosen by configuration: PostgreSQL (the default, in the
 * service's own database) or Elasticsearch (`SEARCH_ENGINE=elasticsearch`, `ELASTICSEARCH_URL`).
 */
import type { Knex } from 'knex';
import type { Config } from '../../platform/config.js';
import { ElasticsearchSearchIndex } from './elasticsearch.js';
import type { SearchIndex } from './port.js';
import { PostgresSearchIndex } from './postgres.js';

export type ClosableSearchIndex = SearchIndex & { close(): Promise<void> };

/**
 * Elasticsearch indices are created on first use (so the service starts while the cluster is
 * still coming up; writes and searches fail until it answers).
 */
export function createSearchIndex(config: Pick<Config, 'search'>, knex: Knex): ClosableSearchIndex {
  if (config.search.engine === 'elasticsearch') {
    if (!config.search.elasticsearchUrl) throw new Error('SEARCH_ENGINE=elasticsearch needs ELASTICSEARCH_URL');
    return ElasticsearchSearchIndex.connect(config.search.elasticsearchUrl, { prefix: config.search.elasticsearchIndexPrefix });
  }
  return Object.assign(new PostgresSearchIndex(knex), { close: async () => {} });
}
