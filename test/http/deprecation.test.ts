import { expect } from 'chai';
import { createClient, DEPRECATED_OPERATION_WARNING, type DeprecationNotice } from '../../client/src/index.js';
import { until } from '../support/redis-topologies.js';
import { PrometheusMetrics } from '../../src/adapters/metrics/prometheus-metrics.js';
import { deprecationHeaders, type Deprecation, type Operation } from '../../src/adapters/http/operation.js';
import { describeOperations } from '../../src/adapters/http/openapi-document.js';
import { OPERATIONS, type ApiUseCases } from '../../src/adapters/http/operations.js';
import { KEYS } from '../fixtures/catalog-fixture.js';
import { memoryInfrastructure, startTestServer, type TestServer } from '../support/test-server.js';

/** The test's own table: no public operation is deprecated today, so these two are, here only. */
const BY_ID: Deprecation = { since: new Date('2026-11-01T00:00:00Z'), sunset: new Date('2027-06-01T00:00:00Z'), link: 'https://partners.example.com/deprecations/products-by-id' };
const CHANGES: Deprecation = { since: new Date('2026-10-15T12:30:00Z'), link: 'https://partners.example.com/deprecations/changes' };
const DEPRECATED: ReadonlyMap<string, Deprecation> = new Map([['getProductById', BY_ID], ['getChanges', CHANGES]]);
const TABLE: readonly Operation<ApiUseCases>[] = OPERATIONS.map((operation) => {
  const deprecation = DEPRECATED.get(operation.operationId);
  return deprecation === undefined ? operation : { ...operation, deprecation };
});

const BY_ID_HEADERS = {
  deprecation: '@1793491200',
  sunset: 'Tue, 01 Jun 2027 00:00:00 GMT',
  link: '<https://partners.example.com/deprecations/products-by-id>; rel="deprecation"; type="text/html"',
};

describe('a deprecated operation (Deprecation, Sunset, Link), in a table of the test\'s own', function () {
  const running: TestServer[] = [];
  afterEach(async function () {
    for (const server of running.splice(0)) await server.close();
  });

  const start = async (fastPath: boolean): Promise<{ server: TestServer; metrics: PrometheusMetrics }> => {
    const metrics = new PrometheusMetrics();
    const server = await startTestServer({ ...await memoryInfrastructure(), metrics }, { operations: TABLE, fastPath });
    running.push(server);
    return { server, metrics };
  };
  const announced = (headers: Record<string, unknown>): Record<string, unknown> =>
    ({ deprecation: headers.deprecation, sunset: headers.sunset, link: headers.link });
  const calls = async (metrics: PrometheusMetrics): Promise<Record<string, number>> => {
    const [family] = (await metrics.registry.getMetricsAsJSON()).filter(({ name }) => name === 'pcat_deprecated_operation_calls_total');
    return Object.fromEntries((family?.values ?? []).map(({ labels, value }) => [`${String(labels.operation)} ${String(labels.partner)}`, value]));
  };

  for (const fastPath of [true, false]) {
    it(`announces it on every answer, found or refused, and on no other operation's (${fastPath ? 'fast path' : 'Koa'})`, async function () {
      const { server } = await start(fastPath);
      const acme = { headers: { 'X-API-Key': KEYS.acme } };
      for (const [path, options, status] of [
        ['/api/v1/public/products/1', acme, 200],
        ['/api/v1/public/products/999999', acme, 404],
        ['/api/v1/public/products/abc', acme, 400],
        ['/api/v1/public/products/1', {}, 401],
      ] as const) {
        const response = await server.request(path, options);
        expect(response.status, path).to.equal(status);
        expect(announced(response.headers), `${path} ${status}`).to.deep.equal(BY_ID_HEADERS);
      }
      const head = await server.request('/api/v1/public/products/1', { method: 'HEAD', ...acme });
      expect(announced(head.headers)).to.deep.equal(BY_ID_HEADERS);
      // Deprecated without a sunset: no Sunset header.
      const changes = await server.request('/api/v1/public/changes', acme);
      expect(changes.status).to.equal(200);
      expect(announced(changes.headers)).to.deep.equal({
        deprecation: '@1792067400', sunset: undefined, link: '<https://partners.example.com/deprecations/changes>; rel="deprecation"; type="text/html"',
      });
      for (const path of ['/api/v1/public/sku/TENT-2P', '/api/v1/public/products?id=1', '/healthz']) {
        expect(announced((await server.request(path, acme)).headers), path).to.deep.equal({ deprecation: undefined, sunset: undefined, link: undefined });
      }
    });
  }

  it('counts its calls by the partner whose key each carried, and those with no key taken as "none"', async function () {
    const { server, metrics } = await start(true);
    for (const key of [KEYS.acme, KEYS.acme, KEYS.globex]) await server.request('/api/v1/public/products/1', { headers: { 'X-API-Key': key } });
    await server.request('/api/v1/public/products/1');
    await server.request('/api/v1/public/changes', { headers: { 'X-API-Key': KEYS.globex } });
    await server.request('/api/v1/public/sku/TENT-2P', { headers: { 'X-API-Key': KEYS.acme } });
    expect(await calls(metrics)).to.deep.equal({ 'getProductById acme': 2, 'getProductById globex': 1, 'getProductById none': 1, 'getChanges globex': 1 });
  });

  it('is marked deprecated in the OpenAPI document, GET and HEAD, saying since when, until when and where to read more', function () {
    const paths = describeOperations(TABLE, 'https://api.example.com').paths as Record<string, Record<string, { deprecated?: boolean; description: string }>>;
    for (const method of ['get', 'head']) {
      expect(paths['/api/v1/public/products/{id}']![method]!.deprecated, method).to.equal(true);
      expect(paths['/api/v1/public/sku/{sku}']![method]!.deprecated, method).to.equal(undefined);
    }
    expect(paths['/api/v1/public/products/{id}']!.get!.description)
      .to.include('**Deprecated since 2026-11-01**; served until 2027-06-01.').and.include('(https://partners.example.com/deprecations/products-by-id)');
    expect(paths['/api/v1/public/changes']!.get!.description).to.include('**Deprecated since 2026-10-15**.').and.not.include('Sunset');
  });

  it('is told to the typed client\'s caller once per operation, with its date, sunset and link; operations not deprecated are not told', async function () {
    const { server } = await start(true);
    const notices: DeprecationNotice[] = [];
    const client = createClient({ baseUrl: server.url, apiKey: KEYS.acme, onDeprecation: (notice) => notices.push(notice) });
    const product = await client.getBySku('TENT-2P');
    for (let i = 0; i < 3; i += 1) await client.getById(product.product.id);
    await client.getManyById([product.product.id]);
    for await (const change of client.changes()) expect(change.sku).to.be.a('string');
    expect(notices).to.deep.equal([
      { operation: 'getProductById', deprecatedSince: BY_ID.since, sunset: BY_ID.sunset, link: BY_ID.link },
      { operation: 'getChanges', deprecatedSince: CHANGES.since, link: CHANGES.link },
    ]);
  });

  it('is emitted once per operation as a Node DeprecationWarning by a client given no callback', async function () {
    const { server } = await start(true);
    const warnings: Error[] = [];
    const listener = (warning: Error): void => {
      if ((warning as { code?: string }).code === DEPRECATED_OPERATION_WARNING) warnings.push(warning);
    };
    process.on('warning', listener);
    try {
      const client = createClient({ baseUrl: server.url, apiKey: KEYS.acme });
      for (let i = 0; i < 2; i += 1) await client.getById(1);
      // Node hands warnings to listeners on a later turn: the first is awaited, then any second would be there too.
      await until('the warning emitted', () => warnings.length > 0);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', listener);
    }
    expect(warnings.map(({ name, message }) => [name, message])).to.deep.equal([[
      'DeprecationWarning',
      'Partner Catalog API: getProductById is deprecated since 2026-11-01T00:00:00.000Z, served until 2027-06-01T00:00:00.000Z; see https://partners.example.com/deprecations/products-by-id',
    ]]);
  });

  it('marks no public operation deprecated today', function () {
    expect(OPERATIONS.filter((operation) => operation.deprecation !== undefined).map(({ operationId }) => operationId)).to.deep.equal([]);
  });

  it('refuses a table whose deprecation could not be announced as written', function () {
    const since = new Date('2026-11-01T00:00:00Z');
    expect(() => deprecationHeaders('getX', { since, sunset: since, link: 'https://example.com/x' })).to.throw('getX: its sunset must come after its deprecation date');
    expect(() => deprecationHeaders('getX', { since, link: 'http://example.com/x' })).to.throw('getX: its deprecation link must be an absolute https URL');
    expect(() => deprecationHeaders('getX', { since, link: 'https://example.com/a>b' })).to.throw('getX: its deprecation link must be an absolute https URL');
    expect(() => deprecationHeaders('getX', { since: new Date('not a date'), link: 'https://example.com/x' })).to.throw('getX: its deprecation date is not a date');
  });
});
