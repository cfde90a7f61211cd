/**
 * The search index the service uses, chosen by configuration: PostgreSQL (the default, in the
 * service's own database) or Elasticsearch (`SEARCH_ENGINE=elasticsearch`, `ELASTICSEARCH_URL`).
 */
import type { Knex } from 'knex';
import type { Config } from '../../platform/config.js';
import type { SearchIndex } from './port.js';
import { PostgresSearchIndex } from './postgres.js';

export type ClosableSearchIndex = SearchIndex & { close(): Promise<void> };

export function createSearchIndex(config: Pick<Config, 'search'>, knex: Knex): ClosableSearchIndex {
  if (config.search.engine === 'postgres') return Object.assign(new PostgresSearchIndex(knex), { close: async () => {} });
  throw new Error('the Elasticsearch search index is not available in this build yet');
}
