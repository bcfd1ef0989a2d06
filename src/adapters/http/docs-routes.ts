import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Router } from '@koa/router';
import { sendError } from './error-response.js';
import { openApiDocument } from './openapi-document.js';

// Every script is a same-origin file, so the page runs under helmet's default CSP (script-src 'self'),
// less upgrade-insecure-requests (security-headers.ts).
const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Partner Catalog Lookup API</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/docs.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io.
const DOCS_SCRIPT = `window.ui = SwaggerUIBundle({ url: 'openapi.json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null });\n`;

interface Asset {
  readonly type: string;
  load(): Promise<Buffer | string>;
}

const resolveInstalled = createRequire(import.meta.url).resolve;

/** Read once, on first use: the bundle is large and never changes while the process runs. */
function installedFile(specifier: string): () => Promise<Buffer> {
  let loaded: Promise<Buffer> | undefined;
  return () => (loaded ??= readFile(resolveInstalled(specifier)));
}

const ASSETS: ReadonlyMap<string, Asset> = new Map([
  ['swagger-ui-bundle.js', { type: 'text/javascript', load: installedFile('swagger-ui-dist/swagger-ui-bundle.js') }],
  ['swagger-ui.css', { type: 'text/css', load: installedFile('swagger-ui-dist/swagger-ui.css') }],
  ['docs.js', { type: 'text/javascript', load: () => Promise.resolve(DOCS_SCRIPT) }],
]);

const DOCS = '/docs';

/** The docs page and its files, which carry the docs' security headers. */
export function isDocsPath(path: string): boolean {
  return path === DOCS || path.startsWith(`${DOCS}/`);
}

/** `/openapi.json` and the Swagger UI page at `/docs`, from the installed npm package (no CDN); no key needed. */
export function registerDocsRoutes<StateT>(router: Router<StateT>): void {
  router.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument;
  });
  router.get(DOCS, (ctx) => {
    ctx.type = 'text/html';
    ctx.body = DOCS_PAGE;
  });
  router.get(`${DOCS}/:asset`, async (ctx) => {
    const asset = ASSETS.get(ctx.params.asset ?? '');
    if (asset === undefined) {
      sendError(ctx, 404, 'not_found', 'No such endpoint.');
      return;
    }
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = await asset.load();
  });
}
