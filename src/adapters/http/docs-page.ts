import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

// Every script is a same-origin file, so the page runs under helmet's default CSP (script-src 'self'),
// less upgrade-insecure-requests (security-headers.ts).
/** The docs page: Swagger UI over `/openapi.json`, from the installed npm package (no CDN); no key needed. */
export const DOCS_PAGE = Buffer.from(`<!doctype html>
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
`, 'utf8');

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io.
const DOCS_SCRIPT = `window.ui = SwaggerUIBundle({ url: 'openapi.json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null });\n`;

interface Asset {
  /** Its Content-Type. */
  readonly type: string;
  load(): Promise<Buffer>;
}

const resolveInstalled = createRequire(import.meta.url).resolve;

/** Read once, on first use: the bundle is large and never changes while the process runs. */
function installedFile(specifier: string): () => Promise<Buffer> {
  let loaded: Promise<Buffer> | undefined;
  return () => (loaded ??= readFile(resolveInstalled(specifier)));
}

/** The files the docs page loads, by name. */
export const DOCS_ASSETS: ReadonlyMap<string, Asset> = new Map([
  ['swagger-ui-bundle.js', { type: 'text/javascript; charset=utf-8', load: installedFile('swagger-ui-dist/swagger-ui-bundle.js') }],
  ['swagger-ui.css', { type: 'text/css; charset=utf-8', load: installedFile('swagger-ui-dist/swagger-ui.css') }],
  ['docs.js', { type: 'text/javascript; charset=utf-8', load: () => Promise.resolve(Buffer.from(DOCS_SCRIPT, 'utf8')) }],
]);

