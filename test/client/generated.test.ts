/** The committed client (openapi.json, src/schema.ts) is what `npm run client:generate` writes from the current document. */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { generate, OPENAPI_FILE, SCHEMA_FILE } from '../../clients/typescript/scripts/generate.js';

describe('TypeScript client: generated files', function () {
  this.timeout(60_000);

  it('are up to date with the OpenAPI document (otherwise run npm run client:generate)', async () => {
    const { openapi, schema } = await generate();
    expect(readFileSync(OPENAPI_FILE, 'utf8') === openapi, 'clients/typescript/openapi.json is stale: run npm run client:generate').to.equal(true);
    expect(readFileSync(SCHEMA_FILE, 'utf8') === schema, 'clients/typescript/src/schema.ts is stale: run npm run client:generate').to.equal(true);
  });
});
