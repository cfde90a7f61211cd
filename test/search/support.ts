/**
 * The Elasticsearch node of the tests: ELASTICSEARCH_URL (`npm run search:node -- start` runs
 * one; .ci/run does). Without it the Elasticsearch suites report "skipped: no Elasticsearch";
 * with CI=true they fail instead, since CI must run them.
 */
import { randomUUID } from 'node:crypto';
import { ElasticsearchSearchIndex, type ElasticsearchSearchIndexOptions } from '../../readmodels/search/elasticsearch.js';

export const requireElasticsearch = process.env.CI === 'true';

/** The URL of a reachable node, null when there is none; throws when CI requires one. */
export async function testElasticsearchUrl(env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const url = env.ELASTICSEARCH_URL;
  if (url && (await elasticsearchReachable(url))) return url;
  if (env.CI === 'true') throw new Error(`CI=true but no Elasticsearch answers at ELASTICSEARCH_URL (${url ?? 'unset'})`);
  return null;
}

export async function elasticsearchReachable(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/_cluster/health`, { signal: AbortSignal.timeout(5000) });
    return res.ok;
  } catch {
    return false;
  }
}

/** A fresh Elasticsearch index set under a prefix of its own, or null when there is no node. */
export async function openTestElasticsearch(options: { bulk?: ElasticsearchSearchIndexOptions['bulk'] } = {}): Promise<ElasticsearchSearchIndex | null> {
  const url = await testElasticsearchUrl();
  if (!url) return null;
  const index = ElasticsearchSearchIndex.connect(url, { prefix: `test-${process.pid}-${randomUUID().slice(0, 8)}`, ...options });
  await index.ensureIndices();
  return index;
}

export const NO_ELASTICSEARCH = 'no Elasticsearch (set ELASTICSEARCH_URL, e.g. after `npm run search:node -- start`)';
