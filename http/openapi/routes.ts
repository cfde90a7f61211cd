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
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};
const assetCache = new Map<string, Buffer>();

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>E-invoicing ledger service: API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" type="image/png" sizes="32x32" href="/docs/assets/favicon-32x32.png">
<link rel="icon" type="image/png" sizes="16x16" href="/docs/assets/favicon-16x16.png">
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

async function asset(name: string): Promise<Buffer> {
  let body = assetCache.get(name);
  if (!body) {
    body = await readFile(path.join(SWAGGER_UI_DIR, name));
    assetCache.set(name, body);
  }
  return body;
}

export function documentationRoutes(router: Router): void {
  router.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument();
  });
  // Browsers ask for /favicon.ico whatever the page names: the same icon.
  router.get('/favicon.ico', async (ctx) => {
    ctx.type = 'image/png';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = await asset('favicon-32x32.png');
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get('/docs/assets/:asset', async (ctx) => {
    const name = ctx.params.asset!;
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!type) throw new HttpProblem(404, `no asset ${name.slice(0, 60)}`);
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = await asset(name);
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = metricsContentType;
    ctx.body = await metricsText();
  });
}
