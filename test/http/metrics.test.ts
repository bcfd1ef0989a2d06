import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import parsePrometheusTextFormat, { type ParsedFamily, type ParsedSample } from 'parse-prometheus-text-format';
import { CachedProductCatalog, heldBytes, MISS_BYTES } from '../../src/adapters/cache/cached-product-catalog.js';
import { MemoryAuthFailureGuard } from '../../src/adapters/memory/memory-auth-failure-guard.js';
import { MemoryRateLimiter } from '../../src/adapters/memory/memory-rate-limiter.js';
import { startMetricsServer, type RunningMetricsServer } from '../../src/adapters/metrics/metrics-server.js';
import { PrometheusMetrics } from '../../src/adapters/metrics/prometheus-metrics.js';
import { openMysqlStorage, type MysqlStorage } from '../../src/adapters/mysql/mysql-storage.js';
import { systemClock } from '../../src/application/common/clock.js';
import type { Sku } from '../../src/domain/sku.js';
import { fixtureCatalog, KEYS } from '../fixtures/catalog-fixture.js';
import { importCatalog } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';
import { memoryInfrastructure, startTestServer, type TestServer } from '../support/test-server.js';
import { OPERATIONS } from '../../src/adapters/http/operations.js';
import { pathTemplate } from '../../src/adapters/http/operation.js';
import { ASSET_PATHS } from '../../src/adapters/portal/portal-pages.js';
import { PORTAL_PATHS } from '../../src/adapters/portal/portal-paths.js';
import { PortalClient, startTestPortal } from '../support/portal-server.js';
import { memoryPortalWorld } from '../support/portal-world.js';
import { ROOT } from '../support/script-command.js';

/*
 * The figures of /metrics (docs/decisions.md, metrics) after known requests to a real server,
 * scraped from the real metrics listener and read with a Prometheus text-format parser.
 */

const SKU_ROUTE = '/api/v1/public/sku/:sku';
const PRODUCT_ROUTE = '/api/v1/public/products/:id';
const BATCH_ROUTE = '/api/v1/public/products';

interface Scrape {
  readonly text: string;
  readonly families: readonly ParsedFamily[];
}

async function scrape(metricsServer: RunningMetricsServer): Promise<Scrape> {
  const response = await fetch(metricsServer.url);
  expect(response.status).to.equal(200);
  expect(response.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
  const text = await response.text();
  // Throws on any line that is not in the text format.
  return { text, families: parsePrometheusTextFormat(text) };
}

function family(scraped: Scrape, name: string): ParsedFamily {
  const found = scraped.families.find((f) => f.name === name);
  if (found === undefined) throw new Error(`no ${name} in the exposition`);
  return found;
}

/** The family's samples as `label=value,...` → value, for exact comparison. */
function samples(scraped: Scrape, name: string): Record<string, number> {
  const entries = family(scraped, name).metrics.map((m: ParsedSample) => [labelText(m.labels), Number(m.value ?? m.count)] as const);
  return Object.fromEntries(entries);
}

function labelText(labels: Readonly<Record<string, string>> | undefined): string {
  return Object.entries(labels ?? {}).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`).join(',');
}

/**
 * Requests per route in the duration histogram, with its buckets checked to be cumulative and to
 * end at the count. Read from the registry: the parser folds a histogram's routes together.
 */
async function durationCounts(metrics: PrometheusMetrics): Promise<Record<string, number>> {
  const histogram = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'pcat_http_request_duration_seconds');
  const values = (histogram?.values ?? []) as { metricName?: string; labels: Record<string, string | number>; value: number }[];
  const counts: Record<string, number> = {};
  for (const { metricName, labels, value } of values) {
    if (metricName !== 'pcat_http_request_duration_seconds_count') continue;
    const route = String(labels.route);
    const buckets = values.filter((v) => v.metricName === 'pcat_http_request_duration_seconds_bucket' && v.labels.route === route).map((v) => v.value);
    expect(buckets, route).to.deep.equal([...buckets].sort((a, b) => a - b));
    expect(buckets.at(-1), route).to.equal(value);
    counts[route] = value;
  }
  return counts;
}

/**
 * What the documentation says a `route` label can hold: the paragraph of README.md or docs/ that
 * begins "`route` is the template", its API templates listed one by one, and its portal examples.
 */
function documentedRoutes(): { readonly api: Set<string>; readonly portalExamples: string[]; readonly text: string } {
  const files = [join(ROOT, 'README.md'), ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(ROOT, 'docs', f))];
  const paragraphs = files.flatMap((file) => readFileSync(file, 'utf8').split(/\n\s*\n/)).filter((p) => p.startsWith('`route` is the template'));
  expect(paragraphs, 'one paragraph documents the route label').to.have.length(1);
  const text = paragraphs[0]!.replace(/\s+/g, ' ');
  const paths = [...text.matchAll(/`(\/[^`]*)`/g)].map((m) => m[1]!);
  return { api: new Set(paths.filter((p) => !p.startsWith('/portal'))), portalExamples: paths.filter((p) => p.startsWith('/portal/')), text };
}

/** Nothing that names a partner, a key, a key id or a SKU of the fixture. */
function expectNothingIdentifying(text: string): void {
  for (const secret of ['acme', 'globex', 'acme-prod', 'globex-prod', 'TENT-2P', 'GLOBEX-ONLY', 'NO-SUCH-SKU', 'pcat_live_', ...Object.values(KEYS)]) {
    expect(text, secret).to.not.include(secret);
  }
}

describe('metrics (/metrics)', function () {
  const running: { close(): Promise<void> }[] = [];
  afterEach(async function () {
    for (const item of running.splice(0).reverse()) await item.close();
  });

  async function serve(metrics: PrometheusMetrics): Promise<RunningMetricsServer> {
    const metricsServer = await startMetricsServer(metrics, { port: 0, host: '127.0.0.1' });
    running.push(metricsServer);
    return metricsServer;
  }

  describe('on MySQL storage with the response cache, as production runs it', function () {
    const testDb = useTestDatabase();
    before(async function () {
      await importCatalog(testDb.db, fixtureCatalog());
    });

    it('counts a known sequence exactly: 200s on both HTTP paths, 401s, 404s, a 429 and a cache hit', async function () {
      const metrics = new PrometheusMetrics();
      const storage: MysqlStorage = await openMysqlStorage({ url: testDb.url });
      running.push(storage);
      metrics.watchDatabasePool(storage.poolUse);
      const catalog = new CachedProductCatalog(storage.catalog, { ttlMs: 30_000, metrics });
      metrics.watchResponseCache(catalog);
      const server: TestServer = await startTestServer({
        catalog,
        changes: storage.changes,
        keys: storage.keys,
        // Three a window, so the fourth request of a key is refused.
        limiter: new MemoryRateLimiter({ limit: 3, clock: systemClock }),
        readiness: storage.readiness,
        metrics,
      });
      running.push(server);
      const metricsServer = await serve(metrics);
      const acme = { 'X-API-Key': KEYS.acme };

      const statuses = [
        (await server.request('/api/v1/public/sku/TENT-2P', { headers: acme })).status, // fast path, cache miss
        (await server.request('/api/v1/public/sku/TENT-2P', { headers: acme })).status, // cache hit
        (await server.request('/api/v1/public/sku/NO-SUCH-SKU', { headers: acme })).status, // cache miss
        (await server.request('/api/v1/public/products/1', { headers: acme })).status, // fourth of the key: 429
        (await server.request('/api/v1/public/sku/TENT-2P')).status, // no key
        (await server.request('/api/v1/public/sku/TENT-2P', { headers: { 'X-API-Key': KEYS.unknown } })).status,
        // Encoded, so the fast path leaves it to Koa: the same route template, a cache miss.
        (await server.request('/api/v1/public/sku/GLOBEX%2DONLY', { headers: { 'X-API-Key': KEYS.globex } })).status,
        (await server.request('/no/such/path/acme-prod')).status,
      ];
      expect(statuses).to.deep.equal([200, 200, 404, 429, 401, 401, 200, 404]);

      const scraped = await scrape(metricsServer);
      expect(samples(scraped, 'pcat_http_requests_total')).to.deep.equal({
        [`mode=live,route=${SKU_ROUTE},status=200`]: 3,
        [`mode=live,route=${SKU_ROUTE},status=404`]: 1,
        [`mode=live,route=${SKU_ROUTE},status=401`]: 2,
        [`mode=live,route=${PRODUCT_ROUTE},status=429`]: 1,
        'mode=live,route=unmatched,status=404': 1,
      });
      expect(family(scraped, 'pcat_http_request_duration_seconds').type).to.equal('HISTOGRAM');
      expect(await durationCounts(metrics)).to.deep.equal({ [SKU_ROUTE]: 6, [PRODUCT_ROUTE]: 1, unmatched: 1 });
      expect(samples(scraped, 'pcat_rate_limit_rejections_total')).to.deep.equal({ 'limit=key': 1, 'limit=auth_failures': 0 });
      expect(samples(scraped, 'pcat_auth_failures_total')).to.deep.equal({ 'code=missing_api_key': 1, 'code=invalid_api_key': 1 });
      expect(samples(scraped, 'pcat_response_cache_lookups_total')).to.deep.equal({ 'result=hit': 1, 'result=miss': 3 });
      // Every request is answered: nothing lent, nobody waiting, and the connections that served them kept open.
      const pool = samples(scraped, 'pcat_db_pool_connections');
      expect(pool['state=in_use']).to.equal(0);
      expect(pool['state=idle']).to.be.at.least(1);
      expect(samples(scraped, 'pcat_db_pool_waiting')).to.deep.equal({ '': 0 });
      // One request at a time: no caller ever waited for a connection.
      expect(samples(scraped, 'pcat_db_pool_wait_seconds_total')).to.deep.equal({ '': 0 });
      expect(family(scraped, 'pcat_db_pool_wait_seconds_total').type).to.equal('COUNTER');
      // TENT-2P and NO-SUCH-SKU of acme, GLOBEX-ONLY of globex: the miss is held too.
      expect(samples(scraped, 'pcat_response_cache_entries')).to.deep.equal({ '': 3 });
      const bodyBytes = async (partner: string, sku: string): Promise<number> =>
        (await storage.catalog.findBySku(partner, sku as Sku))!.body.length;
      // TENT-2P's hit kept its copy, counted once more for its body.
      const tent = await bodyBytes('acme', 'TENT-2P');
      expect(samples(scraped, 'pcat_response_cache_bytes')).to.deep.equal({
        '': heldBytes(tent) + tent + MISS_BYTES + heldBytes(await bodyBytes('globex', 'GLOBEX-ONLY')),
      });
      expect(family(scraped, 'process_cpu_seconds_total').type).to.equal('COUNTER');
      expect(family(scraped, 'nodejs_heap_size_used_bytes').type).to.equal('GAUGE');
      expect(family(scraped, 'nodejs_eventloop_lag_seconds').type).to.equal('GAUGE');
      // Left out on purpose: observing every garbage collection costs the lookups (docs/decisions.md, metrics).
      expect(scraped.families.map((f) => f.name)).to.not.include('nodejs_gc_duration_seconds');
      expectNothingIdentifying(scraped.text);
    });
  });

  it('counts a request held back for its address\'s failed authentications as a rate-limit rejection', async function () {
    const metrics = new PrometheusMetrics();
    const server = await startTestServer({
      ...await memoryInfrastructure(),
      authFailures: new MemoryAuthFailureGuard({ failuresPerWindow: 1, clock: systemClock }),
      metrics,
    });
    running.push(server);
    const metricsServer = await serve(metrics);
    const unknown = { headers: { 'X-API-Key': KEYS.unknown } };
    expect((await server.request('/api/v1/public/sku/TENT-2P', unknown)).status).to.equal(401);
    expect((await server.request('/api/v1/public/sku/TENT-2P', unknown)).status).to.equal(429);
    const scraped = await scrape(metricsServer);
    expect(samples(scraped, 'pcat_rate_limit_rejections_total')).to.deep.equal({ 'limit=key': 0, 'limit=auth_failures': 1 });
    expect(samples(scraped, 'pcat_auth_failures_total')).to.deep.equal({ 'code=missing_api_key': 0, 'code=invalid_api_key': 1 });
    expect(samples(scraped, 'pcat_http_requests_total')).to.deep.equal({ [`mode=live,route=${SKU_ROUTE},status=401`]: 1, [`mode=live,route=${SKU_ROUTE},status=429`]: 1 });
  });

  it('records the same figures whether the lookups take the fast path or go through Koa', async function () {
    const paths = [
      ['/api/v1/public/sku/TENT-2P', KEYS.acme],
      ['/api/v1/public/sku/TENT-2P', KEYS.unknown],
      ['/api/v1/public/sku/TENT-2P', null],
      ['/api/v1/public/sku/NOPE', KEYS.acme],
      ['/api/v1/public/products/abc', KEYS.acme],
      ['/api/v1/public/products/999999', KEYS.globex],
      ['/api/v1/public/products/1', KEYS.acme],
      ['/api/v1/public/products/1', KEYS.acme],
      // The batch has a route of its own; an empty ID (which only Koa routes) is still the lookup by ID's.
      ['/api/v1/public/products?sku=SHARED-1,NOPE', KEYS.globex],
      ['/api/v1/public/products?id=1,01', KEYS.globex],
      ['/api/v1/public/products/', KEYS.globex],
    ] as const;
    const figures = [];
    for (const fastPath of [true, false]) {
      const metrics = new PrometheusMetrics();
      const server = await startTestServer({ ...await memoryInfrastructure({ limit: 4 }), metrics }, { fastPath });
      running.push(server);
      const metricsServer = await serve(metrics);
      for (const [path, key] of paths) await server.request(path, key === null ? {} : { headers: { 'X-API-Key': key } });
      const scraped = await scrape(metricsServer);
      figures.push([
        ...['pcat_http_requests_total', 'pcat_rate_limit_rejections_total', 'pcat_auth_failures_total'].map((name) => samples(scraped, name)),
        await durationCounts(metrics),
      ]);
    }
    expect(figures[0]).to.deep.equal(figures[1]);
    expect(figures[0]![0]).to.deep.equal({
      [`mode=live,route=${SKU_ROUTE},status=200`]: 1,
      [`mode=live,route=${SKU_ROUTE},status=401`]: 2,
      [`mode=live,route=${SKU_ROUTE},status=404`]: 1,
      [`mode=live,route=${PRODUCT_ROUTE},status=400`]: 2,
      [`mode=live,route=${PRODUCT_ROUTE},status=404`]: 1,
      [`mode=live,route=${PRODUCT_ROUTE},status=200`]: 1,
      [`mode=live,route=${PRODUCT_ROUTE},status=429`]: 1,
      [`mode=live,route=${BATCH_ROUTE},status=200`]: 1,
      [`mode=live,route=${BATCH_ROUTE},status=400`]: 1,
    });
  });

  it('labels a wrong method on a known route with its template, and made-up paths as unmatched', async function () {
    const metrics = new PrometheusMetrics();
    const server = await startTestServer({ ...await memoryInfrastructure(), metrics });
    running.push(server);
    const metricsServer = await serve(metrics);
    expect((await server.request('/api/v1/public/sku/TENT-2P', { method: 'DELETE' })).status).to.equal(405);
    for (let i = 0; i < 5; i += 1) expect((await server.request(`/made-up/${i}`)).status).to.equal(404);
    expect((await server.request('/healthz')).status).to.equal(200);
    const scraped = await scrape(metricsServer);
    expect(samples(scraped, 'pcat_http_requests_total')).to.deep.equal({
      [`mode=live,route=${SKU_ROUTE},status=405`]: 1,
      'mode=live,route=unmatched,status=404': 5,
      'mode=live,route=/healthz,status=200': 1,
    });
  });

  it('labels every request, the API\'s and the portal\'s, pages and files alike, with a value the documentation names', async function () {
    const documented = documentedRoutes();
    expect(documented.text, 'the label of a path no route has').to.include('`unmatched`');
    expect(documented.api, 'the API\'s templates, every one and no other').to.deep.equal(new Set(OPERATIONS.map((operation) => pathTemplate(operation.path).route)));
    const metrics = new PrometheusMetrics();
    const server = await startTestServer({ ...await memoryInfrastructure(), metrics });
    running.push(server);
    const portal = await startTestPortal(await memoryPortalWorld(), { metrics });
    running.push(portal);
    const metricsServer = await serve(metrics);
    const examples: Record<string, string> = { sku: 'TENT-2P', id: '1', asset: 'docs.js' };
    const queries: Record<string, string> = { getProducts: '?sku=TENT-2P' };
    for (const operation of OPERATIONS) {
      const path = operation.path.replace(/\{(\w+)\}/g, (_all, name: string) => examples[name]!) + (queries[operation.operationId] ?? '');
      expect((await server.request(path, { headers: { 'X-API-Key': KEYS.acme } })).status, path).to.equal(200);
      expect((await server.request(path, { method: 'POST' })).status, `POST ${path}`).to.equal(405);
    }
    expect((await server.request('/made-up')).status).to.equal(404);
    const browser = new PortalClient(portal.url);
    const visits: [string, string, number][] = [
      ['GET', '/portal', 302], ['GET', '/portal/login', 200], ['GET', ASSET_PATHS.css, 200], ['GET', ASSET_PATHS.js, 200],
      ['POST', ASSET_PATHS.css, 405], ['GET', PORTAL_PATHS.apiKeys, 302],
      ['POST', `${PORTAL_PATHS.webhooks}/whep_0000000000000001/messages/msg_aaaaaaaaaaaaaaaaaaaaaa/resend`, 403], ['GET', '/portal/invite/made-up-token', 410], ['GET', '/portal/made-up', 404],
    ];
    for (const [method, path, status] of visits) expect((await browser.send(method, path)).status, `${method} ${path}`).to.equal(status);

    const counted = samples(await scrape(metricsServer), 'pcat_http_requests_total');
    // Every request carried a live key or none: all are counted as live.
    const routes = new Set(Object.keys(counted).map((labels) => /^mode=live,route=([^,]*),status=\d{3}$/.exec(labels)![1]!));
    for (const route of routes) {
      expect(route === 'unmatched' || documented.api.has(route) || (route.startsWith('/portal') && !route.includes('made-up')), `route="${route}"`).to.equal(true);
    }
    expect([...routes].filter((route) => route.startsWith('/portal')).sort()).to.deep.equal(
      ['/portal', '/portal/assets/portal.css', '/portal/assets/portal.js', '/portal/invite/:token', '/portal/login', PORTAL_PATHS.apiKeys,
        `${PORTAL_PATHS.webhooks}/:endpointId/messages/:messageId/resend`].sort());
    expect(routes, 'the documentation\'s examples are labels the portal gives').to.include.members(documented.portalExamples);
    expect(counted['mode=live,route=/portal/assets/portal.css,status=405'], 'a wrong method on a portal file, under its template').to.equal(1);
    expect(counted['mode=live,route=unmatched,status=404']).to.equal(2);
  });
});
