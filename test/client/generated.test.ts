/** The committed client (openapi.json, src/schema.ts) is what `npm run client:generate` writes from the current document. */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { clientDocument, generate, OPENAPI_FILE, SCHEMA_FILE } from '../../clients/typescript/scripts/generate.js';
import { openApiDocument } from '../../http/openapi/index.js';

describe('TypeScript client: generated files', function () {
  this.timeout(60_000);

  it('are up to date with the OpenAPI document (otherwise run npm run client:generate)', async () => {
    const { openapi, schema } = await generate();
    expect(readFileSync(OPENAPI_FILE, 'utf8') === openapi, 'clients/typescript/openapi.json is stale: run npm run client:generate').to.equal(true);
    expect(readFileSync(SCHEMA_FILE, 'utf8') === schema, 'clients/typescript/src/schema.ts is stale: run npm run client:generate').to.equal(true);
  });

  it('leave out POST /as4 (for other Peppol access points, not integrators) and nothing else', () => {
    const service = openApiDocument() as { paths: Record<string, unknown>; tags: { name: string }[] };
    const client = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as typeof service;
    expect(service.paths['/as4']).to.not.equal(undefined);
    expect(client.paths['/as4']).to.equal(undefined);
    expect(Object.keys(client.paths)).to.deep.equal(Object.keys(service.paths).filter((p) => p !== '/as4'));
    expect(client.tags.map((t) => t.name)).to.deep.equal(service.tags.map((t) => t.name).filter((n) => n !== 'Peppol AS4'));
    expect(clientDocument(service)).to.deep.equal(client);
    expect(readFileSync(SCHEMA_FILE, 'utf8')).to.not.contain('"/as4"');
  });
});
