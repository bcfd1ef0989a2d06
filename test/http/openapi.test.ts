import { expect } from 'chai';
import type { Router } from '@koa/router';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describeOperations } from '../../src/adapters/http/openapi-document.js';
import { OPERATIONS, openApiDocument } from '../../src/adapters/http/operations.js';
import { createPipeline } from '../../src/adapters/http/pipeline.js';
import { createLogger } from '../../src/adapters/logging/logger.js';
import { DEMO_CATALOG_FILE, DEMO_PARTNER_ID, readCatalogFile } from '../../src/adapters/catalog-file/catalog-file.js';
import { MemoryProductCatalog } from '../support/memory-product-catalog.js';
import { createHttpApp } from '../../src/adapters/http/app.js';
import { createContainer, TOKENS } from '../../src/composition/container.js';
import { parseSku } from '../../src/domain/sku.js';
import { exchange } from '../support/hostile-clients.js';
import { checkAgainstOpenApi, schemaAt, type ObservedExchange } from '../support/openapi-check.js';
import { memoryInfrastructure, startTestServer, type TestServer } from '../support/test-server.js';

const document = openApiDocument as Record<string, any>;

/** Every `[pointer, node]` of the document, depth first. */
function* walk(node: unknown, pointer = ''): Generator<[string, Record<string, any>]> {
  if (node === null || typeof node !== 'object') return;
  yield [pointer, node as Record<string, any>];
  for (const [key, child] of Object.entries(node)) yield* walk(child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
}

describe('OpenAPI document', function () {
  it('is a valid OpenAPI 3.1 document', async function () {
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors, JSON.stringify(result.errors, null, 2)).to.equal(undefined);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
  });

  it('describes both lookups with both auth schemes and every error code of each', function () {
    const codes = (op: any, status: number): unknown => op.responses[status].content['application/json'].schema.allOf[1].properties.error.enum;
    const bySku = document.paths['/api/v1/public/sku/{sku}'].get;
    const byId = document.paths['/api/v1/public/products/{id}'].get;
    for (const op of [bySku, byId]) {
      expect(op.security).to.deep.equal([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
      expect(Object.keys(op.responses as object)).to.deep.equal(['200', '304', '400', '401', '404', '408', '429', '500', '503']);
      expect(codes(op, 401)).to.deep.equal(['missing_api_key', 'invalid_api_key']);
      expect(codes(op, 429)).to.deep.equal(['rate_limit_exceeded']);
      expect(codes(op, 500)).to.deep.equal(['internal_error']);
      expect(codes(op, 503)).to.deep.equal(['service_unavailable']);
    }
    expect([codes(bySku, 400), codes(bySku, 404)]).to.deep.equal([['invalid_sku', 'bad_request'], ['sku_not_found']]);
    expect([codes(byId, 400), codes(byId, 404)]).to.deep.equal([['invalid_product_id', 'bad_request'], ['product_not_found']]);
    expect(document.components.securitySchemes.bearerAuth).to.include({ type: 'http', scheme: 'bearer' });
    expect(document.components.securitySchemes.apiKeyHeader).to.include({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
  });

  it('works in generic tools as it is: a server, HEAD beside every GET, an integer product ID, each error code an enum', function () {
    expect(document.servers).to.deep.equal([{ url: 'http://127.0.0.1:3000', description: 'This service, as partners reach it' }]);
    for (const [template, item] of Object.entries(document.paths as Record<string, any>)) {
      expect(item.head, `HEAD ${template}`).to.not.equal(undefined);
      expect(Object.keys(item.head.responses as object), `HEAD ${template}`).to.deep.equal(Object.keys(item.get.responses as object));
      for (const [status, response] of Object.entries(item.head.responses as Record<string, any>)) {
        // A timed-out request is answered before it is parsed, its method unknown: that 408 has its body.
        if (status !== '408') expect(response.content, `HEAD ${template} ${status}`).to.equal(undefined);
      }
      expect(item.head.responses[408]).to.deep.equal(item.get.responses[408]);
    }
    const id = (document.paths['/api/v1/public/products/{id}'].get.parameters as any[]).find((p) => p.name === 'id');
    expect(id.schema).to.deep.equal({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
    expect(Object.keys(document.paths['/api/v1/public/sku/{sku}'].get.responses as object)).to.include('304');
  });

  it('names whom to contact and the terms of use: API support and the docs page by default, the deployment\'s own when configured', function () {
    expect(document.info.contact).to.deep.equal({ name: 'API support' });
    expect(document.info.license).to.deep.equal({ name: 'Partner agreement', url: 'http://127.0.0.1:3000/docs' });
    expect(document.info.termsOfService).to.equal(undefined);
    const configured = describeOperations(OPERATIONS, 'https://api.example.com', {
      contact: { name: 'Acme Catalog Team', email: 'api-support@acme.example', url: 'https://acme.example/support' }, termsUrl: 'https://acme.example/terms',
    });
    expect(configured.info).to.deep.include({
      contact: { name: 'Acme Catalog Team', email: 'api-support@acme.example', url: 'https://acme.example/support' },
      license: { name: 'Partner agreement', url: 'https://acme.example/terms' },
      termsOfService: 'https://acme.example/terms',
    });
  });

  it('declares on every operation the listener\'s own 400 bad_request and 408 request_timeout, beside its own 4xx', function () {
    const codes = (op: any, status: number): unknown => op.responses[status]?.content?.['application/json'].schema.allOf[1].properties.error.enum;
    for (const [template, item] of Object.entries(document.paths as Record<string, any>)) {
      expect(codes(item.get, 400), template).to.include('bad_request');
      expect(codes(item.get, 408), template).to.deep.equal(['request_timeout']);
    }
    expect(codes(document.paths['/api/v1/public/sku/{sku}'].get, 400)).to.deep.equal(['invalid_sku', 'bad_request']);
    for (const template of ['/healthz', '/readyz', '/openapi.json', '/docs']) expect(codes(document.paths[template].get, 400), template).to.deep.equal(['bad_request']);
  });

  it('closes every object schema with additionalProperties: false', function () {
    for (const [pointer, node] of walk(document.components.schemas, '/components/schemas')) {
      if (node.type === 'object' && node.properties !== undefined) expect(node.additionalProperties, pointer).to.equal(false);
    }
  });

  it('holds examples that match their own schemas', function () {
    let checked = 0;
    for (const [pointer, node] of walk(document)) {
      if (node.schema === undefined || node.examples === undefined || typeof node.examples !== 'object' || Array.isArray(node.examples)) continue;
      const validate = schemaAt(`${pointer}/schema`);
      for (const [name, example] of Object.entries(node.examples as Record<string, { value: unknown }>)) {
        expect(validate(example.value), `${pointer} example ${name}: ${JSON.stringify(validate.errors)}`).to.equal(true);
        checked += 1;
      }
    }
    expect(checked).to.be.greaterThan(10);
  });

  it('shows the demo catalog\'s TENT-2P exactly as the service answers it', async function () {
    const catalog = new MemoryProductCatalog(await readCatalogFile(DEMO_CATALOG_FILE));
    const example = document.paths['/api/v1/public/sku/{sku}'].get.responses[200].content['application/json'].examples['TENT-2P'].value;
    expect(example).to.deep.equal(JSON.parse((await catalog.findBySku(DEMO_PARTNER_ID, parseSku('TENT-2P')))!.body.toString('utf8')));
  });

  it('describes every route of the router, and the router serves every path it describes', async function () {
    const deps = createContainer({ api: { ...await memoryInfrastructure(), logger: createLogger('silent') } }).get(TOKENS.HttpDependencies);
    const app = createHttpApp(OPERATIONS, createPipeline(deps, OPERATIONS, 'http://127.0.0.1:3000'), deps.logger);
    const router = app.middleware.map((m) => (m as { router?: Router }).router).find((r) => r !== undefined);
    expect(router, 'the router middleware').to.not.equal(undefined);
    const aliases = new Map<string, string>();
    for (const [template, item] of Object.entries(document.paths as Record<string, any>)) {
      for (const alias of (item['x-empty-parameter-paths'] ?? []) as string[]) aliases.set(alias, template);
    }
    const routed = new Map<string, string[]>();
    for (const layer of router!.stack) {
      const path = String(layer.path);
      const template = aliases.get(path) ?? path.replace(/:(\w+)/g, '{$1}');
      routed.set(template, [...new Set([...(routed.get(template) ?? []), ...layer.methods.map((m) => m.toLowerCase())])].sort());
    }
    const documented = new Map(Object.entries(document.paths as Record<string, any>).map(([template, item]) => [
      template,
      Object.keys(item as object).filter((k) => ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(k)).sort(),
    ]));
    expect(Object.fromEntries(routed)).to.deep.equal(Object.fromEntries(documented));
  });
});

describe('OpenAPI response check', function () {
  const ok: ObservedExchange = {
    method: 'GET',
    path: '/healthz',
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'abc', 'cache-control': 'no-store' },
    text: '{"status":"ok"}',
  };

  it('accepts a documented exchange and refuses each kind of drift', function () {
    expect(() => checkAgainstOpenApi(ok)).to.not.throw();
    expect(() => checkAgainstOpenApi({ ...ok, text: '{"status":"ok","uptime":1}' })).to.throw(/additional properties/);
    expect(() => checkAgainstOpenApi({ ...ok, status: 418 })).to.throw(/status 418 is not documented/);
    expect(() => checkAgainstOpenApi({ ...ok, headers: { ...ok.headers, 'x-request-id': undefined } })).to.throw(/X-Request-Id is required/);
    expect(() => checkAgainstOpenApi({ ...ok, headers: { ...ok.headers, 'content-type': 'text/plain' } })).to.throw(/Content-Type/);
    expect(() => checkAgainstOpenApi({ ...ok, path: '/metrics' })).to.throw(/promises 404/);
    expect(() => checkAgainstOpenApi({ ...ok, method: 'POST' })).to.throw(/promises 405/);
    expect(() => checkAgainstOpenApi({ ...ok, method: 'HEAD' })).to.throw(/a body was sent/);
  });
});

describe('HTTP: /openapi.json and /docs', function () {
  let server: TestServer;

  before(async function () {
    server = await startTestServer(await memoryInfrastructure());
  });
  after(async function () {
    await server.close();
  });

  it('names PUBLIC_BASE_URL as the document\'s server, and sends HSTS on the API\'s answers when it is https', async function () {
    const behind = await startTestServer((await memoryInfrastructure()), { publicBaseUrl: 'https://api.example.com' });
    try {
      const served = await behind.request('/openapi.json');
      expect((served.json() as { servers: unknown }).servers).to.deep.equal([{ url: 'https://api.example.com', description: 'This service, as partners reach it' }]);
      expect((await behind.request('/healthz')).headers['strict-transport-security']).to.equal('max-age=31536000; includeSubDomains');
      expect((await server.request('/healthz')).headers['strict-transport-security']).to.equal(undefined);
    } finally {
      await behind.close();
    }
  });

  it('serves the document with the deployment\'s contact and terms when they are configured', async function () {
    const documentInfo = { contact: { name: 'Acme Catalog Team', email: 'api-support@acme.example' }, termsUrl: 'https://acme.example/terms' };
    const configured = await startTestServer(await memoryInfrastructure(), { documentInfo });
    try {
      const served = (await configured.request('/openapi.json')).json() as { info: Record<string, unknown> };
      expect(served.info).to.deep.include({ contact: documentInfo.contact, license: { name: 'Partner agreement', url: 'https://acme.example/terms' }, termsOfService: 'https://acme.example/terms' });
    } finally {
      await configured.close();
    }
  });

  it('serves the document at /openapi.json without a key', async function () {
    const response = await server.request('/openapi.json');
    expect(response.status).to.equal(200);
    expect(response.json()).to.deep.equal(JSON.parse(JSON.stringify(openApiDocument)));
  });

  it('serves a docs page that runs under the default CSP: same-origin scripts only, none inline', async function () {
    const page = await server.request('/docs');
    expect(page.status).to.equal(200);
    expect(page.headers['content-type']).to.match(/^text\/html/);
    expect(page.headers['content-security-policy']).to.include("script-src 'self'");
    const scripts = [...page.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((s) => s[1]?.trim())).to.deep.equal(['src="docs/swagger-ui-bundle.js"', 'src="docs/docs.js"']);
    expect(scripts.every((s) => s[2] === '')).to.equal(true);
    expect(page.text).to.not.match(/https?:\/\//);
  });

  it('lets the docs load over plain HTTP on any host: the page and its files carry no upgrade-insecure-requests, the API\'s answers a JSON API\'s policy', async function () {
    for (const path of ['/docs', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/docs.js']) {
      const csp = (await server.request(path)).headers['content-security-policy'];
      expect(csp, path).to.include("script-src 'self'").and.not.include('upgrade-insecure-requests');
    }
    for (const path of ['/api/v1/public/sku/TENT-2P', '/api/v1/public/products/1', '/healthz', '/openapi.json', '/no-such-path']) {
      expect((await server.request(path)).headers['content-security-policy'], path).to.equal("default-src 'none'; frame-ancestors 'none'");
    }
  });

  it('serves the Swagger UI files from the installed package, and not_found for any other', async function () {
    const bundle = await server.request('/docs/swagger-ui-bundle.js');
    expect(bundle.headers['content-type']).to.match(/^text\/javascript/);
    expect(bundle.text).to.include('SwaggerUIBundle');
    expect((await server.request('/docs/swagger-ui.css')).headers['content-type']).to.match(/^text\/css/);
    expect((await server.request('/docs/docs.js')).text).to.include("url: 'openapi.json'");
    const missing = await server.request('/docs/index.html');
    expect(missing.status).to.equal(404);
    expect(missing.json()).to.deep.equal({ error: 'not_found', message: 'No such endpoint.' });
  });
});

/** A raw answer as the OpenAPI check reads an exchange: status, lower-case headers, body text. */
function observed(method: string, path: string, data: string): ObservedExchange {
  const end = data.indexOf('\r\n\r\n');
  const [head, text] = [data.slice(0, end), data.slice(end + 4)];
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { method, path, status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]), headers, text };
}

describe('HTTP: the listener\'s own answers to each operation, as the document declares them', function () {
  this.timeout(60_000);
  let server: TestServer;
  before(async function () {
    server = await startTestServer(await memoryInfrastructure(), { timeouts: { headersMs: 500, requestMs: 1_000 } });
  });
  after(async function () {
    await server.close();
  });
  const examples: Record<string, string> = { sku: 'TENT-2P', id: '1', asset: 'docs.js' };
  const paths = OPERATIONS.map((operation) => operation.path.replace(/\{(\w+)\}/g, (_all, name: string) => examples[name]!));

  for (const method of ['GET', 'HEAD']) {
    it(`answers ${method} with two Host headers 400 bad_request, as every operation declares it`, async function () {
      for (const path of paths) {
        const { data, closedByServer } = await exchange(server.url, `${method} ${path} HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n`);
        const answer = observed(method, path, data);
        expect(answer.status, path).to.equal(400);
        expect(() => checkAgainstOpenApi(answer), path).to.not.throw();
        expect(closedByServer, path).to.equal(true);
      }
    });

    it(`answers ${method} whose headers never end 408 request_timeout, as every operation declares it`, async function () {
      // At once: each waits for the server's own timeout.
      const answers = await Promise.all(paths.map(async (path) => {
        const { data } = await exchange(server.url, `${method} ${path} HTTP/1.1\r\nHost: x\r\n`, { waitMs: 5_000 });
        return observed(method, path, data);
      }));
      for (const answer of answers) {
        expect(answer.status, answer.path).to.equal(408);
        expect(() => checkAgainstOpenApi(answer), answer.path).to.not.throw();
      }
    });
  }
});
