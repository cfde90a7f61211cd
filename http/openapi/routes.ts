/**
 * GET /openapi.json (the document), GET /docs (the API reference page: swagger-ui from
 * node_modules, no CDN, so it works offline) and its assets, GET /metrics (Prometheus). No
 * authentication.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Router from '@koa/router';
import { metricsContentType, metricsText } from '../../platform/metrics.js';
import { HttpProblem } from '../errors.js';
import { openApiDocument } from './index.js';

const require = createRequire(import.meta.url);
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};
const assetCache = new Map<string, Buffer>();

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>E-invoicing ledger service: API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="docs"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#docs',
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  tryItOutEnabled: false,
  validatorUrl: null
});
</script>
</body>
</html>
`;

export function documentationRoutes(router: Router): void {
  router.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument();
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get('/docs/assets/:asset', async (ctx) => {
    const asset = ctx.params.asset!;
    const type = Object.hasOwn(ASSETS, asset) ? ASSETS[asset] : undefined;
    if (!type) throw new HttpProblem(404, `no asset ${asset.slice(0, 60)}`);
    let body = assetCache.get(asset);
    if (!body) {
      body = await readFile(path.join(SWAGGER_UI_DIR, asset));
      assetCache.set(asset, body);
    }
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = body;
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = metricsContentType;
    ctx.body = await metricsText();
  });
}
