import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createLogger } from '../../src/adapters/logging/logger.js';
import { createFastPath } from '../../src/adapters/http/fast-path.js';
import { OPERATIONS } from '../../src/adapters/http/operations.js';
import { createPipeline } from '../../src/adapters/http/pipeline.js';
import { createContainer, TOKENS } from '../../src/composition/container.js';
import { KEYS } from '../fixtures/catalog-fixture.js';
import { memoryInfrastructure, startTestServer, type Response, type TestServer } from '../support/test-server.js';

const API = '/api/v1/public';

interface Exchange {
  readonly path: string;
  readonly method?: string;
  readonly headers?: Record<string, string>;
}

const bearer = (key: string): Record<string, string> => ({ Authorization: `Bearer ${key}` });
const otherParameters = (n: number): string => Array.from({ length: n }, (_, i) => `p${i}=1`).join('&');

/** Every kind of request to an operation: success, conditional, each error, each header form. */
function lookupExchanges(etag: string, batchEtag: string): Exchange[] {
  const paths = [
    `${API}/sku/TENT-2P`, `${API}/sku/abc-1`, `${API}/sku/ABC-1`, `${API}/sku/OLD.STOVE_1`, `${API}/sku/SHARED-1`,
    `${API}/sku/GLOBEX-ONLY`, `${API}/sku/NOPE`, `${API}/sku/..`, `${API}/sku/a~b`, `${API}/sku/${'A'.repeat(51)}`,
    `${API}/sku/TENT-2P?fields=all&x=1`, `${API}/products/1`, `${API}/products/2`, `${API}/products/999999`,
    `${API}/products/0`, `${API}/products/01`, `${API}/products/abc`, `${API}/products/${'9'.repeat(17)}`,
    `${API}/products/1?x`, `${API}/sku/${KEYS.acme}`, `${API}/products?sku=TENT-2P,abc-1,NOPE,TENT-2P`, `${API}/products?id=1,2,999999`,
    `${API}/products?sku=TENT-2P%2Cabc-1`, `${API}/products`, `${API}/products?sku=TENT-2P&id=1`, `${API}/products?id=1&id=2`, `${API}/products?sku=a,,b`,
    `${API}/products?id=1,01`, `${API}/products?sku=${Array.from({ length: 101 }, (_, i) => `S${i}`).join(',')}`, `${API}/products?${otherParameters(1001)}`,
    `${API}/changes?limit=0`, `${API}/changes?limit=1&limit=2`,
    // A page of changes holds a cursor each server signs with its own key: its errors are compared.
    `${API}/changes?cursor=nope`,
    // Past the query's bound, and a cursor after 1,000 other parameters (node:querystring alone stops at the 1,000th).
    `${API}/changes?${otherParameters(1001)}`, `${API}/changes?${otherParameters(1000)}&cursor=nope`, '/healthz', '/readyz', '/openapi.json', '/docs', '/docs/docs.js', '/docs/nope.js',
  ];
  const headerSets: Record<string, string>[] = [
    {}, bearer(KEYS.acme), { 'X-API-Key': KEYS.acme }, bearer(KEYS.globex), bearer(KEYS.acmeRevoked), bearer(KEYS.unknown),
    { Authorization: `Basic ${KEYS.acme}` }, { 'X-API-Key': 'not-a-key' }, { Authorization: '  ', 'X-API-Key': KEYS.acmeSecond },
  ];
  const exchanges: Exchange[] = [];
  for (const path of paths) {
    for (const headers of headerSets) {
      exchanges.push({ path, headers }, { path, method: 'HEAD', headers });
    }
  }
  for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*', '"other"', '']) {
    for (const method of ['GET', 'HEAD']) {
      exchanges.push({ path: `${API}/sku/TENT-2P`, method, headers: { ...bearer(KEYS.acme), 'If-None-Match': ifNoneMatch } });
    }
  }
  for (const ifNoneMatch of [batchEtag, etag, '*']) {
    exchanges.push({ path: `${API}/products?sku=TENT-2P,NOPE`, headers: { ...bearer(KEYS.acme), 'If-None-Match': ifNoneMatch } });
  }
  for (const requestId of ['trace-42', 'bad id!', KEYS.acme, 'x'.repeat(129)]) {
    exchanges.push({ path: `${API}/sku/TENT-2P`, headers: { ...bearer(KEYS.acme), 'X-Request-Id': requestId } });
    exchanges.push({ path: `${API}/sku/NOPE`, headers: { 'X-Request-Id': requestId } });
  }
  return exchanges;
}

/** What must be equal between the two servers: everything but the clock and fresh request IDs. */
function comparable(response: Response, exchange: Exchange): Record<string, unknown> {
  const headers: Record<string, unknown> = { ...response.headers };
  delete headers.date;
  const sentId = exchange.headers?.['X-Request-Id'];
  if (sentId === undefined || headers['x-request-id'] !== sentId) {
    expect(headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
    headers['x-request-id'] = '<generated>';
  }
  // Two servers' windows start a few ms apart, so the reset may differ by a second: sendToBoth compares it apart.
  if (typeof headers['ratelimit-reset'] === 'string') headers['ratelimit-reset'] = '<reset>';
  if (typeof headers.ratelimit === 'string') headers.ratelimit = headers.ratelimit.replace(/;t=[0-9]+$/, ';t=<reset>');
  // The same second as Retry-After, and in a 429's message.
  const retryAfter = headers['retry-after'];
  if (typeof retryAfter === 'string') headers['retry-after'] = '<reset>';
  const text = typeof retryAfter === 'string' ? response.text.replaceAll(retryAfter, '<reset>') : response.text;
  return { status: response.status, headers, text };
}

function comparableLog(line: string | undefined): Record<string, unknown> {
  const entry = JSON.parse(line ?? '{}') as Record<string, unknown>;
  delete entry.time;
  delete entry.ms;
  delete entry.pid;
  delete entry.hostname;
  if (typeof entry.reqId === 'string' && /^[0-9a-f-]{36}$/.test(entry.reqId)) entry.reqId = '<generated>';
  return entry;
}

describe('HTTP: the fast path answers exactly as the Koa routes do', function () {
  let fast: TestServer;
  let koa: TestServer;

  afterEach(async function () {
    await fast.close();
    await koa.close();
  });

  async function sendToBoth(exchange: Exchange): Promise<void> {
    const options = { method: exchange.method ?? 'GET', headers: exchange.headers ?? {} };
    const [viaFast, viaKoa] = await Promise.all([fast.request(exchange.path, options), koa.request(exchange.path, options)]);
    const label = `${options.method} ${exchange.path} ${JSON.stringify(options.headers)}`;
    expect(comparable(viaFast, exchange), label).to.deep.equal(comparable(viaKoa, exchange));
    for (const name of ['ratelimit-reset', 'retry-after']) {
      const [fastSeconds, koaSeconds] = [viaFast, viaKoa].map((response) => Number(response.headers[name] ?? 0));
      expect(Math.abs(fastSeconds! - koaSeconds!), `${name} of ${label}`).to.be.at.most(1);
    }
    expect(comparableLog(fast.logs.at(-1)), `log line of ${label}`).to.deep.equal(comparableLog(koa.logs.at(-1)));
  }

  it('for every operation, success, 304 and error: same status, headers, body and log line', async function () {
    fast = await startTestServer(await memoryInfrastructure({ limit: 10_000 }));
    koa = await startTestServer((await memoryInfrastructure({ limit: 10_000 })), { fastPath: false });
    const etag = String((await koa.request(`${API}/sku/TENT-2P`, { headers: bearer(KEYS.acme) })).headers.etag);
    await fast.request(`${API}/sku/TENT-2P`, { headers: bearer(KEYS.acme) });
    const batchEtag = String((await koa.request(`${API}/products?sku=TENT-2P,NOPE`, { headers: bearer(KEYS.acme) })).headers.etag);
    await fast.request(`${API}/products?sku=TENT-2P,NOPE`, { headers: bearer(KEYS.acme) });
    const exchanges = lookupExchanges(etag, batchEtag);
    expect(exchanges.length).to.be.greaterThan(300);
    for (const exchange of exchanges) await sendToBoth(exchange);
  });

  it('past the rate limit: same 429 with Retry-After and RateLimit headers', async function () {
    fast = await startTestServer(await memoryInfrastructure({ limit: 3 }));
    koa = await startTestServer((await memoryInfrastructure({ limit: 3 })), { fastPath: false });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      await sendToBoth({ path: `${API}/sku/TENT-2P`, headers: bearer(KEYS.acme) });
      statuses.push(Number(/"status":(\d+)/.exec(fast.logs.at(-1) ?? '')?.[1]));
    }
    expect(statuses).to.deep.equal([200, 200, 200, 429, 429]);
  });

  it('when storage fails: same 500, logged as unexpected on both', async function () {
    const failing = async () => ({
      ...await memoryInfrastructure(),
      catalog: {
        findBySku: () => Promise.reject(new Error('ER_BAD_FIELD')), findById: () => Promise.reject(new Error('boom')),
        findManyBySku: () => Promise.reject(new Error('ER_BAD_FIELD')), findManyById: () => Promise.reject(new Error('boom')),
      },
    });
    fast = await startTestServer(await failing());
    koa = await startTestServer(await failing(), { fastPath: false });
    for (const path of [`${API}/sku/TENT-2P`, `${API}/products/1`, `${API}/products?sku=TENT-2P`, `${API}/products?id=1`]) {
      await sendToBoth({ path, headers: bearer(KEYS.acme) });
      for (const server of [fast, koa]) expect(server.logs.some((l) => l.includes('unexpected error'))).to.equal(true);
    }
  });
});

describe('HTTP: what the fast path takes, and what it leaves to Koa', function () {
  let server: Server;
  let base: string;

  before(async function () {
    const container = createContainer({ api: { ...await memoryInfrastructure(), logger: createLogger('silent') } });
    const fastPath = createFastPath(OPERATIONS, createPipeline(container.get(TOKENS.HttpDependencies), OPERATIONS, 'http://127.0.0.1:3000'));
    // Whatever the fast path declines is answered 599 here, so a test can tell who answered.
    server = createServer((req, res) => {
      if (!fastPath(req, res)) res.writeHead(599).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(function () {
    server.close();
  });

  const status = async (path: string, method = 'GET'): Promise<number> => (await fetch(`${base}${path}`, { method, headers: bearer(KEYS.acme) })).status;

  it('takes GET and HEAD of every operation\'s exact path, or of its path with a plain trailing segment, whatever the answer', async function () {
    expect(await status(`${API}/sku/TENT-2P`)).to.equal(200);
    expect(await status(`${API}/sku/TENT-2P`, 'HEAD')).to.equal(200);
    expect(await status(`${API}/sku/TENT-2P?x=1`)).to.equal(200);
    expect(await status(`${API}/sku/NOPE`)).to.equal(404);
    expect(await status(`${API}/sku/${'A'.repeat(51)}`)).to.equal(400);
    expect(await status(`${API}/products/1`)).to.equal(200);
    expect(await status(`${API}/products/abc`)).to.equal(400);
    expect(await status(`${API}/products?sku=TENT-2P,abc-1`)).to.equal(200);
    expect(await status(`${API}/products`, 'HEAD')).to.equal(400);
    expect(await status(`${API}/changes?limit=2`)).to.equal(200);
    expect(await status('/healthz', 'HEAD')).to.equal(200);
    expect(await status('/openapi.json')).to.equal(200);
    expect(await status('/docs/nope.js')).to.equal(404);
  });

  it('leaves other methods, encoded or empty segments, deeper paths and other routes to Koa', async function () {
    for (const [path, method] of [
      [`${API}/sku/TENT-2P`, 'POST'], [`${API}/sku/TENT-2P`, 'OPTIONS'], [`${API}/sku/TENT%2D2P`, 'GET'], [`${API}/sku/`, 'GET'],
      [`${API}/sku`, 'GET'], [`${API}/sku/TENT-2P/`, 'GET'], [`${API}/sku/a/b`, 'GET'], [`${API}/SKU/TENT-2P`, 'GET'],
      [`${API}/products/`, 'GET'], ['/healthz', 'POST'], ['/healthz/', 'GET'], ['/nope', 'GET'], [`/x${API}/sku/TENT-2P`, 'GET'],
    ] as const) {
      expect(await status(path, method), `${method} ${path}`).to.equal(599);
    }
  });
});
