/** /api/openapi.json (generated from the route registry) and /api/docs (Swagger UI from swagger-ui-dist, no CDN). */
import Router from '@koa/router';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { openapi } from './routing.js';

let cached: object | undefined;

/**
 * Swagger UI's files, served from the package's folder. The package's entry is not imported: it
 * loads the whole UI bundle into the process (10 MB of heap in every API process for a page few open).
 */
const swaggerUiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The OpenAPI 3.1 document of every registered route. */
export function openApiDocument(): object {
  cached ??= new OpenApiGeneratorV31(openapi.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'switchboard API',
      version: '1.0.0',
      description: [
        'Session memory, CRM and SRE automation.',
        '',
        'Errors are RFC 9457 `application/problem+json` documents `{type, title, status, detail, errors?, request_id}`;',
        '`errors` lists `{path, message}` for each bad field (path is prefixed by `body`, `query`, `params` or `headers`).',
        'Every response carries `X-Request-Id`. Service routes take the API key in `X-API-Key` or `Authorization: Bearer`.',
      ].join('\n'),
    },
    servers: [{ url: '/' }],
  });
  return cached;
}

const assets = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png']);
const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>switchboard API reference</title>
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/api/docs/assets/start.js"></script>
</body></html>`;
// The page's start-up, served as a file so the content security policy needs no inline scripts.
const startScript = `window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#ui', deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' });
`;

/** Routes of the reference itself (not documented in it). */
export function docsRouter(): Router {
  const router = new Router();
  router.get('/api/openapi.json', (ctx) => {
    ctx.body = openApiDocument();
  });
  router.get('/api/docs', (ctx) => {
    ctx.type = 'html';
    ctx.body = page;
  });
  router.get('/api/docs/assets/start.js', (ctx) => {
    ctx.type = 'js';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = startScript;
  });
  router.get('/api/docs/assets/:file', async (ctx) => {
    const file = ctx.params.file!;
    if (!assets.has(file)) return;
    ctx.type = path.extname(file);
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = await readFile(path.join(swaggerUiDir, file));
  });
  return router;
}
