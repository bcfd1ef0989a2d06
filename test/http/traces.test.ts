import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { setTimeout } from 'node:timers/promises';
import type { Deployment } from '../../src/composition/deployment.js';
import { fixtureCatalog, KEYS } from '../fixtures/catalog-fixture.js';
import { fixtureCatalogFile, openTestDeployment } from '../support/deployments.js';
import { importCatalog } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';
import { startRedisServer, type RedisServerProcess } from '../support/redis.js';
import { spansByName, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { memoryInfrastructure, startTestServer, type TestServer } from '../support/test-server.js';
import { renderWaterfall } from '../support/waterfall.js';
import { tracingSettings } from '../../src/adapters/config/tracing-config.js';
import { startTracing } from '../../src/adapters/tracing/start-tracing.js';
import { runIn, tracing } from '../../src/adapters/tracing/tracing.js';
import { createLogger } from '../../src/adapters/logging/logger.js';
import { startTestPortal } from '../support/portal-server.js';
import { memoryPortalWorld } from '../support/portal-world.js';

/*
 * Traces (decisions: traces) exported by the real OpenTelemetry SDK and exporters over OTLP/HTTP to a
 * receiver on loopback, which decodes what arrives as a collector would.
 */

const SKU_PATH = '/api/v1/public/sku/TENT-2P';
const run = promisify(execFile);
const SERVER = 2;
const PARTNER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARTNER_SPAN = '00f067aa0ba902b7';

/** Settings that turn tracing on towards the receiver, exporting every few milliseconds. */
function tracingTo(receiver: OtlpReceiver, settings: Record<string, string> = {}): Record<string, string> {
  return { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '20', ...settings };
}

/** The server span of the request with this request id, once it has arrived. */
async function serverSpanOf(receiver: OtlpReceiver, requestId: string): Promise<ReceivedSpan> {
  const spans = await receiver.waitFor((received) => received.some((span) => span.attributes['pcat.request.id'] === requestId));
  return spans.find((span) => span.attributes['pcat.request.id'] === requestId)!;
}

/** The request's spans: its server span and every span of its trace below it, once all have arrived. */
async function requestSpans(receiver: OtlpReceiver, requestId: string, names: readonly string[]): Promise<Map<string, ReceivedSpan>> {
  const server = await serverSpanOf(receiver, requestId);
  await receiver.waitFor((received) => names.every((name) => received.some((span) => span.traceId === server.traceId && span.name === name)));
  return spansByName(receiver.spans(), server.traceId);
}

/** Everything the receiver holds, as text: no key, nor its hash, may be in it. */
function expectNoSecret(receiver: OtlpReceiver): void {
  const text = JSON.stringify(receiver.spans(), (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
  for (const key of Object.values(KEYS)) {
    expect(text).not.to.include(key);
    expect(text).not.to.include(createHash('sha256').update(key).digest('hex'));
  }
}

describe('traces over OTLP, on memory storage', function () {
  this.timeout(30_000);
  let receiver: OtlpReceiver;
  let deployment: Deployment | undefined;
  let server: TestServer | undefined;

  beforeEach(async function () {
    receiver = await startOtlpReceiver();
  });
  afterEach(async function () {
    await server?.close();
    await deployment?.close();
    server = undefined;
    deployment = undefined;
    await receiver.close();
  });

  const start = async (settings: Record<string, string> = {}): Promise<TestServer> => {
    deployment = await openTestDeployment({ CATALOG_FILE: fixtureCatalogFile(), ...tracingTo(receiver, settings) });
    server = await startTestServer(deployment.api, { traceIds: true });
    return server;
  };

  it("draws a lookup as a server span (the metrics' route template) with the key check below it, and its log line carries the span's ids", async function () {
    const api = await start();
    const response = await api.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme } });
    expect(response.status).to.equal(200);
    const requestId = String(response.headers['x-request-id']);
    const spans = await requestSpans(receiver, requestId, ['key check']);
    const request = spans.get('GET /api/v1/public/sku/:sku')!;
    expect(request.kind).to.equal(SERVER);
    expect(request.parentSpanId, 'a root: no traceparent was sent').to.equal('');
    expect(request.attributes).to.include({
      'http.request.method': 'GET', 'http.route': '/api/v1/public/sku/:sku', 'url.path': SKU_PATH, 'http.response.status_code': 200,
      'pcat.partner.id': 'acme', 'pcat.key.id': 'acme-prod', 'pcat.key.mode': 'live', 'pcat.request.id': requestId,
    });
    expect(spans.get('key check')!.parentSpanId).to.equal(request.spanId);
    expect(request.resource['service.name']).to.equal('partner-catalog-api');
    const line = api.logs.map((text) => JSON.parse(text) as Record<string, unknown>).find((entry) => entry.reqId === requestId)!;
    expect(line).to.include({ trace_id: request.traceId, span_id: request.spanId });
    expectNoSecret(receiver);
  });

  it("continues a partner's valid traceparent and ignores a malformed one", async function () {
    const api = await start();
    const continued = await api.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme, traceparent: `00-${PARTNER_TRACE}-${PARTNER_SPAN}-01`, tracestate: 'partner=1' } });
    const span = await serverSpanOf(receiver, String(continued.headers['x-request-id']));
    expect(span.traceId).to.equal(PARTNER_TRACE);
    expect(span.parentSpanId).to.equal(PARTNER_SPAN);
    for (const malformed of [`00-${PARTNER_TRACE.toUpperCase()}-${PARTNER_SPAN}-01`, `ff-${PARTNER_TRACE}-${PARTNER_SPAN}-01`, `00-${'0'.repeat(32)}-${PARTNER_SPAN}-01`, 'garbage']) {
      const ignored = await api.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme, traceparent: malformed } });
      expect(ignored.status, malformed).to.equal(200);
      const root = await serverSpanOf(receiver, String(ignored.headers['x-request-id']));
      expect(root.parentSpanId, malformed).to.equal('');
      expect(root.traceId, malformed).not.to.equal(PARTNER_TRACE);
    }
  });

  it("carries a partner's tracestate on within the W3C recommendation's bounds (512 characters, valid members), whatever it sends, answering every request", async function () {
    const api = await start();
    const traceparent = `00-${PARTNER_TRACE}-${PARTNER_SPAN}-01`;
    const many = Array.from({ length: 20 }, (_, i) => `k${i}=${'v'.repeat(30)}`).join(',');
    const cases: [string, (kept: string) => boolean][] = [
      ['partner=1,other=two', (kept) => kept === 'partner=1,other=two'],
      [`big=${'x'.repeat(9_000)}`, (kept) => kept === ''],
      // Members up to 512 characters, the rest dropped.
      [many, (kept) => kept.length > 0 && kept.length <= 512 && many.startsWith(kept)],
      ['=,;;,ok', (kept) => kept === ''],
      ['UPPER=1,good=1', (kept) => kept === 'good=1'],
    ];
    for (const [tracestate, keeps] of cases) {
      const response = await api.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme, traceparent, tracestate } });
      expect(response.status, tracestate.slice(0, 40)).to.equal(200);
      const span = await serverSpanOf(receiver, String(response.headers['x-request-id']));
      expect(span.traceId, 'the traceparent continued whatever the tracestate').to.equal(PARTNER_TRACE);
      expect(keeps(span.traceState), `${tracestate.slice(0, 40)} kept as ${span.traceState.slice(0, 40)}`).to.equal(true);
    }
  });

  it("lets no partner decide what is traced with its sampled flag or its trace ids, unless the operator's sampler is parent-based", async function () {
    // The SDK's own ratio sampler keeps a trace whose id ends low: a partner choosing such ids would be traced every time.
    const lowIds = Array.from({ length: 100 }, (_, i) => `${i.toString(16).padStart(24, '0')}00000000`.replace(/^0/, '1'));
    const send = async (api: TestServer): Promise<string[]> => {
      const ids: string[] = [];
      for (const traceId of lowIds) {
        const response = await api.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme, traceparent: `00-${traceId}-${PARTNER_SPAN}-01` } });
        expect(response.status).to.equal(200);
        ids.push(traceId);
      }
      return ids;
    };
    const tracedOf = (ids: readonly string[]): number => new Set(receiver.spans().filter((span) => ids.includes(span.traceId)).map((span) => span.traceId)).size;

    const ratio = await start({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' });
    const ratioIds = await send(ratio);
    // The stop exports everything queued: what was kept is all here.
    await server!.close();
    await deployment!.close();
    server = undefined;
    deployment = undefined;
    expect(tracedOf(ratioIds), 'traces kept of 100 a partner asked to be sampled, at 1 %').to.be.below(15);

    const parentBased = await start({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' });
    await send(parentBased);
    await server!.close();
    await deployment!.close();
    server = undefined;
    deployment = undefined;
    expect(tracedOf(lowIds), 'under a parent-based sampler the caller decides: every one kept').to.equal(100);
  });
});

/**
 * Requests written on connections the service has already served (so it has accepted them and reads
 * them as soon as bytes come), all in one tick: the service reads them in one turn of its event
 * loop, as a busy instance does. Each is sent with its own X-Request-Id.
 */
async function sendInOneTurn(url: string, requests: readonly { path: string; requestId: string }[]): Promise<number[]> {
  const { hostname, port } = new URL(url);
  const request = (path: string, requestId: string, close: boolean): string =>
    `GET ${path} HTTP/1.1\r\nHost: test\r\nX-API-Key: ${KEYS.acme}\r\nX-Request-Id: ${requestId}\r\nConnection: ${close ? 'close' : 'keep-alive'}\r\n\r\n`;
  const sockets = await Promise.all(requests.map(({ requestId }) => new Promise<{ socket: Socket; answers: Buffer[] }>((resolve, reject) => {
    const answers: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(request('/healthz', `${requestId}-warm`, false)));
    socket.on('data', (chunk: Buffer) => {
      answers.push(chunk);
      // The warm-up's answer is whole (healthz answers a short body with its length): the connection is the service's.
      if (answers.length === 1) resolve({ socket, answers });
    });
    socket.once('error', reject);
  })));
  const answered = sockets.map(({ socket, answers }) => new Promise<number>((resolve, reject) => {
    socket.once('end', () => {
      const text = Buffer.concat(answers.slice(1)).toString('latin1');
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0));
    });
    socket.once('error', reject);
  }));
  requests.forEach(({ path, requestId }, i) => sockets[i]!.socket.write(request(path, requestId, true)));
  return Promise.all(answered);
}

/** The spans named `name` that link to a span of the trace of `server`. */
function linkedFrom(spans: readonly ReceivedSpan[], name: string, server: ReceivedSpan): ReceivedSpan[] {
  return spans.filter((span) => span.name === name && span.links.some((link) => link.traceId === server.traceId));
}

describe('traces over OTLP, on MySQL storage with and without Redis', function () {
  this.timeout(60_000);
  const testDb = useTestDatabase();
  let receiver: OtlpReceiver;
  let redis: RedisServerProcess | undefined;
  let deployment: Deployment | undefined;
  let server: TestServer | undefined;

  before(async function () {
    await importCatalog(testDb.db, fixtureCatalog());
  });
  beforeEach(async function () {
    receiver = await startOtlpReceiver();
  });
  afterEach(async function () {
    await server?.close();
    await deployment?.close();
    await redis?.kill();
    server = undefined;
    deployment = undefined;
    redis = undefined;
    await receiver.close();
  });

  it("draws a lookup's key check, response cache (miss, then hit) and database read, that read linked from the request", async function () {
    deployment = await openTestDeployment({ STORAGE: 'mysql', DATABASE_URL: testDb.url, ...tracingTo(receiver) });
    server = await startTestServer(deployment.api, { traceIds: true });
    const first = await server.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme, 'X-Request-Id': 'mysql-first' } });
    expect(first.status).to.equal(200);
    const spans = await requestSpans(receiver, 'mysql-first', ['key check', 'response cache']);
    const request = spans.get('GET /api/v1/public/sku/:sku')!;
    expect(request.attributes['pcat.cache']).to.equal('miss');
    expect(spans.get('response cache')!.parentSpanId).to.equal(request.spanId);
    const [read] = await receiver.waitFor((received) => linkedFrom(received, 'mysql lookup', request).length > 0).then((received) => linkedFrom(received, 'mysql lookup', request));
    expect(read!.parentSpanId, 'a root of its own, linked: it may serve several requests').to.equal('');
    expect(read!.attributes).to.include({ 'db.system.name': 'mysql', 'db.operation.name': 'SELECT', 'pcat.partner.id': 'acme' });
    const second = await server.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme, 'X-Request-Id': 'mysql-second' } });
    expect(second.status).to.equal(200);
    expect((await serverSpanOf(receiver, 'mysql-second')).attributes['pcat.cache']).to.equal('hit');
    // A batch: its hits and misses on the request's span, its own read below it; a page of the changes feed, its read below it.
    expect((await server.request('/api/v1/public/products?sku=TENT-2P,abc-1,NOPE', { headers: { 'X-API-Key': KEYS.acme, 'X-Request-Id': 'mysql-batch' } })).status).to.equal(200);
    const batch = await requestSpans(receiver, 'mysql-batch', ['mysql lookup batch']);
    expect(batch.get('GET /api/v1/public/products')!.attributes).to.include({ 'pcat.cache.hits': 1, 'pcat.cache.misses': 2 });
    expect(batch.get('mysql lookup batch')!.attributes).to.include({ 'pcat.values': 2 });
    expect(batch.get('mysql lookup batch')!.parentSpanId).to.equal(batch.get('GET /api/v1/public/products')!.spanId);
    expect((await server.request('/api/v1/public/changes?limit=2', { headers: { 'X-API-Key': KEYS.acme, 'X-Request-Id': 'mysql-changes' } })).status).to.equal(200);
    const changes = await requestSpans(receiver, 'mysql-changes', ['mysql changes page']);
    expect(changes.get('mysql changes page')!.attributes, 'a page of 2 asks for one more row: is there a next page').to.include({ 'pcat.feed.rows_asked': 3, 'pcat.feed.entries': 3 });
    expectNoSecret(receiver);
  });

  it("draws the one Redis call and the one SELECT that served several requests of a turn once each, linked from every request they served", async function () {
    redis = await startRedisServer();
    deployment = await openTestDeployment({ STORAGE: 'mysql', DATABASE_URL: testDb.url, RATE_LIMIT_STORE: 'redis', REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: '1000', ...tracingTo(receiver) });
    server = await startTestServer(deployment.api, { traceIds: true });
    // Warmed: the key set held, Redis connected.
    while (!(await deployment.api.readiness.isReady())) await setTimeout(20);
    expect((await server.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme } })).status).to.equal(200);
    const requests = ['abc-1', 'ABC-1', 'SHARED-1'].map((sku, i) => ({ path: `/api/v1/public/sku/${sku}`, requestId: `turn-${i}` }));
    expect(await sendInOneTurn(server.url, requests)).to.deep.equal([200, 200, 200]);
    const servers = await Promise.all(requests.map(({ requestId }) => serverSpanOf(receiver, requestId)));
    await receiver.waitFor((received) => servers.every((one) => linkedFrom(received, 'redis count', one).length === 1 && linkedFrom(received, 'mysql lookup', one).length === 1));
    const spans = receiver.spans();
    const counts = new Set(servers.map((one) => linkedFrom(spans, 'redis count', one)[0]!));
    expect(counts.size, 'Redis calls for three requests of one turn').to.equal(1);
    const [count] = [...counts];
    expect(count!.attributes).to.include({ 'db.system.name': 'redis', 'pcat.counts': 3 });
    expect(count!.parentSpanId).to.equal('');
    // The first read goes at once, alone; the two that came while it was in flight share one statement.
    const reads = new Set(servers.map((one) => linkedFrom(spans, 'mysql lookup', one)[0]!));
    expect([...reads].map((read) => read.links.length).sort(), 'requests each SELECT served').to.deep.equal([1, 2]);
    // The picture of docs/observability.md: a request whose read shared its statement with another's.
    const shared = servers.find((one) => linkedFrom(spans, 'mysql lookup', one)[0]!.links.length === 2)!;
    await receiver.waitFor((received) => received.some((span) => span.traceId === shared.traceId && span.name === 'response cache'));
    const picture = renderWaterfall(receiver.spans(), shared);
    if (process.env.PRINT_TRACE === '1') process.stdout.write(`${picture}\n`);
    expect(picture.split('\n').map((line) => line.split('|')[0]!.trim())).to.have.members([
      'GET /api/v1/public/sku/:sku', 'key check', 'response cache', '⇠ linked: redis count (3 requests)', '⇠ linked: mysql lookup (2 requests)',
    ]);
    expectNoSecret(receiver);
  });
});

describe('traces over OTLP, towards a collector that is away', function () {
  this.timeout(30_000);

  it('answers every request while the collector never answers, holds at most the queue and counts what it drops, and stops within its deadline', async function () {
    const receiver = await startOtlpReceiver();
    receiver.mode('black-hole');
    // Metrics are made (METRICS_PORT not 0) though nothing here listens on them.
    const deployment = await openTestDeployment({
      CATALOG_FILE: fixtureCatalogFile(), METRICS_PORT: '9', RATE_LIMIT_PER_MINUTE: '100000',
      ...tracingTo(receiver, { OTEL_BSP_MAX_QUEUE_SIZE: '32', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '8', OTEL_BSP_EXPORT_TIMEOUT: '600000', OTEL_EXPORTER_OTLP_TIMEOUT: '600000' }),
    });
    const server = await startTestServer(deployment.api, { traceIds: true });
    try {
      for (let i = 0; i < 100; i += 1) expect((await server.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme } })).status).to.equal(200);
      const figure = async (name: string): Promise<string> => (await deployment.metrics!.registry.getSingleMetricAsString(name));
      // 200 spans ended (each request's and its key check's): 32 held, and the one export sent (8 at most) never answered.
      const dropped = Number(/^pcat_trace_spans_dropped_total (\d+)$/m.exec(await figure('pcat_trace_spans_dropped_total'))?.[1]);
      expect(dropped).to.be.within(200 - 32 - 8, 200 - 32 - 1);
      expect(receiver.spans(), 'nothing was answered').to.have.length(0);
    } finally {
      await server.close();
      // The stop gives the queue its short deadline, then lets it go.
      await deployment.close();
      await receiver.close();
    }
  });

  it('answers every request while the collector refuses connections, and counts the exports that failed', async function () {
    // A port nothing listens on any more: every export is refused.
    const gone = await startOtlpReceiver();
    await gone.close();
    const deployment = await openTestDeployment({
      CATALOG_FILE: fixtureCatalogFile(), METRICS_PORT: '9', ...tracingTo(gone, { OTEL_BSP_EXPORT_TIMEOUT: '1000' }),
    });
    const server = await startTestServer(deployment.api);
    try {
      for (let i = 0; i < 20; i += 1) expect((await server.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme } })).status).to.equal(200);
      const unexported = async (): Promise<number> => {
        const text = await deployment.metrics!.registry.getSingleMetricAsString('pcat_trace_spans_exported_total');
        return [...text.matchAll(/^pcat_trace_spans_exported_total\{outcome="(?:failed|timeout)"\} (\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
      };
      // Waits for the state: the first exports given up (refused, retried, then failed or past their deadline).
      while ((await unexported()) === 0) await setTimeout(50);
      expect(await unexported()).to.be.above(0);
    } finally {
      await server.close();
      await deployment.close();
    }
  });

  it('exports in protobuf by default, as collectors expect', async function () {
    const receiver = await startOtlpReceiver();
    const deployment = await openTestDeployment({ CATALOG_FILE: fixtureCatalogFile(), OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '20' });
    const server = await startTestServer(deployment.api);
    try {
      const response = await server.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme, traceparent: `00-${PARTNER_TRACE}-${PARTNER_SPAN}-01` } });
      const span = await serverSpanOf(receiver, String(response.headers['x-request-id']));
      expect(span).to.include({ traceId: PARTNER_TRACE, parentSpanId: PARTNER_SPAN, kind: SERVER });
      expect(span.attributes).to.include({ 'pcat.partner.id': 'acme', 'http.response.status_code': 200 });
      expect(receiver.exports[0]!.contentType).to.equal('application/x-protobuf');
    } finally {
      await server.close();
      await deployment.close();
      await receiver.close();
    }
  });
});

describe('log lines inside a span', function () {
  it("carry the span's trace_id and span_id while traces are on, and nothing of them outside a traced step or with traces off", async function () {
    const receiver = await startOtlpReceiver();
    const traces = await startTracing(tracingSettings(tracingTo(receiver))!);
    try {
      const lines: Record<string, unknown>[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      });
      const logger = createLogger('info', sink, { traceIds: true });
      const on = tracing()!;
      const span = on.startRoot('some work');
      runIn(span, () => logger.info({ step: 1 }, 'inside'));
      span.end();
      logger.info({ step: 2 }, 'outside');
      await new Promise((resolve) => setImmediate(resolve));
      expect(lines[0]).to.include({ msg: 'inside', trace_id: span.spanContext().traceId, span_id: span.spanContext().spanId });
      expect(lines[1]).not.to.have.property('trace_id');
    } finally {
      await traces.stop(2_000);
      await receiver.close();
    }
  });
});

describe('the error line of a traced request', function () {
  it("carries the request span's ids, though written after the step that failed had awaited", async function () {
    const receiver = await startOtlpReceiver();
    const traces = await startTracing(tracingSettings(tracingTo(receiver))!);
    const infrastructure = await memoryInfrastructure();
    const failing = new Error('ER_BAD_FIELD: the storage failed');
    const server = await startTestServer({ ...infrastructure, catalog: { ...infrastructure.catalog, findBySku: async () => {
      await setTimeout(1);
      throw failing;
    } } }, { traceIds: true });
    try {
      const response = await server.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme, 'X-Request-Id': 'failing' } });
      expect(response.status).to.equal(500);
      const span = await serverSpanOf(receiver, 'failing');
      const lines = server.logs.map((text) => JSON.parse(text) as Record<string, unknown>);
      const errorLine = lines.find((line) => JSON.stringify(line).includes('ER_BAD_FIELD'));
      expect(errorLine, 'the failure is logged').not.to.equal(undefined);
      expect(errorLine).to.include({ trace_id: span.traceId, span_id: span.spanId });
    } finally {
      await server.close();
      await traces.stop(2_000);
      await receiver.close();
    }
  });
});

describe('traces off', function () {
  this.timeout(60_000);

  it('loads no module of the tracing SDK nor of its exporters: only OTEL_TRACES_EXPORTER=otlp does', async function () {
    const probe = async (settings: Record<string, string>): Promise<{ status: number; sdkModules: number }> => {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/support/sdk-loaded-probe.ts', JSON.stringify(settings)], { timeout: 50_000 });
      return JSON.parse(stdout.trim().split('\n').at(-1)!) as { status: number; sdkModules: number };
    };
    const receiver = await startOtlpReceiver();
    try {
      expect(await probe({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })).to.deep.equal({ status: 200, sdkModules: 0 });
      const on = await probe(tracingTo(receiver));
      expect(on.status).to.equal(200);
      expect(on.sdkModules, 'the probe sees the SDK when it is loaded').to.be.above(0);
    } finally {
      await receiver.close();
    }
  });
});

describe('traces over OTLP, of the portal', function () {
  this.timeout(30_000);

  it("draws each portal request as a server span named by its route template, never its path or its cookie", async function () {
    const receiver = await startOtlpReceiver();
    const traces = await startTracing(tracingSettings(tracingTo(receiver))!);
    const portal = await startTestPortal(await memoryPortalWorld());
    try {
      const token = 'invitation-token-that-is-a-secret';
      const signIn = await fetch(`${portal.url}/portal/login`, { headers: { traceparent: `00-${PARTNER_TRACE}-${PARTNER_SPAN}-01` } });
      expect(signIn.status).to.equal(200);
      const invitation = await fetch(`${portal.url}/portal/invite/${token}`, { headers: { Cookie: 'pcat_session=a-session-secret' } });
      await invitation.arrayBuffer();
      const spans = await receiver.waitFor((received) => received.filter((span) => span.attributes['pcat.listener'] === 'portal').length >= 2);
      const [first, second] = spans.filter((span) => span.attributes['pcat.listener'] === 'portal');
      expect(first).to.include({ name: 'GET /portal/login', kind: SERVER, traceId: PARTNER_TRACE, parentSpanId: PARTNER_SPAN });
      expect(first!.attributes).to.include({ 'http.route': '/portal/login', 'http.response.status_code': 200 });
      expect(second!.name).to.match(/^GET \/portal\/invite\/:/);
      const text = JSON.stringify(spans, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
      expect(text).not.to.include(token);
      expect(text).not.to.include('a-session-secret');
    } finally {
      await portal.close();
      await traces.stop(2_000);
      await receiver.close();
    }
  });
});
