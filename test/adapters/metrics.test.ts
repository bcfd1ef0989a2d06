import { expect } from 'chai';
import { request } from 'node:http';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { startMetricsServer } from '../../src/adapters/metrics/metrics-server.js';
import { exchangeOnce } from '../support/hostile-clients.js';
import { LEFT_OUT_PROCESS_METRICS, MAX_ROUTES, PrometheusMetrics } from '../../src/adapters/metrics/prometheus-metrics.js';
import { createRedisRateLimiter } from '../support/redis-rate-limiter.js';
import { requireRedis, startRedisServer } from '../support/redis.js';
import { redisAt } from '../../src/adapters/redis/redis-target.js';

type Value = { metricName?: string; labels: Record<string, string | number>; value: number };

async function valuesOf(metrics: PrometheusMetrics, name: string): Promise<Value[]> {
  const found = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  if (found === undefined) throw new Error(`no ${name}`);
  return found.values as Value[];
}

async function gauge(metrics: PrometheusMetrics, name: string): Promise<number | undefined> {
  return (await valuesOf(metrics, name))[0]?.value;
}

describe('PrometheusMetrics', function () {
  it('puts a duration in the first bucket whose bound it does not exceed, and past the last bound only in +Inf', async function () {
    const metrics = new PrometheusMetrics();
    for (const seconds of [0.0005, 0.00051, 0.001, 20]) metrics.observeRequest('/r', 200, seconds);
    const buckets = Object.fromEntries((await valuesOf(metrics, 'pcat_http_request_duration_seconds'))
      .filter((v) => v.metricName === 'pcat_http_request_duration_seconds_bucket')
      .map((v) => [String(v.labels.le), v.value]));
    expect(buckets).to.include({ '0.0005': 1, '0.001': 3, '0.0025': 3, '10': 3, '+Inf': 4 });
    const sum = (await valuesOf(metrics, 'pcat_http_request_duration_seconds')).find((v) => v.metricName === 'pcat_http_request_duration_seconds_sum');
    expect(sum?.value).to.be.closeTo(20.00201, 1e-9);
  });

  it(`keeps at most ${MAX_ROUTES} routes, counting requests of any further one as unmatched`, async function () {
    const metrics = new PrometheusMetrics();
    for (let i = 0; i < MAX_ROUTES + 50; i += 1) metrics.observeRequest(`/route/${i}`, 200, 0.001);
    metrics.observeRequest('/route/0', 200, 0.001);
    const requests = await valuesOf(metrics, 'pcat_http_requests_total');
    expect(requests).to.have.length(MAX_ROUTES + 1);
    expect(requests.find((v) => v.labels.route === 'unmatched')?.value).to.equal(50);
    expect(requests.find((v) => v.labels.route === '/route/0')?.value).to.equal(2);
    expect(requests.reduce((total, v) => total + v.value, 0)).to.equal(MAX_ROUTES + 51);
  });

  it('keeps each instance\'s figures apart, so several servers in one process do not mix them', async function () {
    const [one, other] = [new PrometheusMetrics(), new PrometheusMetrics()];
    one.authenticationFailed('invalid_api_key');
    expect((await valuesOf(one, 'pcat_auth_failures_total')).find((v) => v.labels.code === 'invalid_api_key')?.value).to.equal(1);
    expect((await valuesOf(other, 'pcat_auth_failures_total')).find((v) => v.labels.code === 'invalid_api_key')?.value).to.equal(0);
  });

  it('names no gauge like a counter: prom-client\'s totals of live handles, requests and resources are left out, their gauges by type kept', async function () {
    const exposed = await new PrometheusMetrics().registry.getMetricsAsJSON();
    const names = exposed.map((m) => m.name);
    // prom-client types `type` as a numeric enum; the registry's JSON holds the name, as the text format does.
    expect(exposed.filter((m) => String(m.type) !== 'counter' && m.name.endsWith('_total')).map((m) => m.name)).to.deep.equal([]);
    for (const name of LEFT_OUT_PROCESS_METRICS) expect(names).to.not.include(name);
    expect(names).to.include('nodejs_active_handles').and.include('nodejs_active_requests');
  });

  it('exposes the pool\'s wait as a counter of seconds, and the response cache\'s entries and bytes as gauges, both read when scraped', async function () {
    const metrics = new PrometheusMetrics();
    let pool = { inUse: 10, idle: 0, waiting: 4, waitedSeconds: 1.5 };
    const cache = { entries: 0, bytes: 0 };
    metrics.watchDatabasePool(() => pool);
    metrics.watchResponseCache(cache);
    const types = Object.fromEntries((await metrics.registry.getMetricsAsJSON()).map((m) => [m.name, String(m.type)]));
    expect(types).to.include({ pcat_db_pool_wait_seconds_total: 'counter', pcat_db_pool_waiting: 'gauge', pcat_response_cache_entries: 'gauge', pcat_response_cache_bytes: 'gauge' });
    expect(await gauge(metrics, 'pcat_db_pool_wait_seconds_total')).to.equal(1.5);
    expect(await gauge(metrics, 'pcat_response_cache_entries')).to.equal(0);
    expect(await gauge(metrics, 'pcat_response_cache_bytes')).to.equal(0);
    pool = { ...pool, waiting: 0, waitedSeconds: 2.25 };
    cache.entries = 10_000;
    cache.bytes = 140_260_000;
    expect(await gauge(metrics, 'pcat_db_pool_wait_seconds_total')).to.equal(2.25);
    expect(await gauge(metrics, 'pcat_db_pool_waiting')).to.equal(0);
    expect(await gauge(metrics, 'pcat_response_cache_entries')).to.equal(10_000);
    expect(await gauge(metrics, 'pcat_response_cache_bytes')).to.equal(140_260_000);
  });

  it('counts the Redis counts given up as slow, as the limiter reports them when scraped', async function () {
    const metrics = new PrometheusMetrics();
    let slow = 0;
    metrics.watchRedisSlowCounts(() => slow);
    expect(await gauge(metrics, 'pcat_rate_limiter_redis_slow_counts_total')).to.equal(0);
    slow = 3;
    expect(await gauge(metrics, 'pcat_rate_limiter_redis_slow_counts_total')).to.equal(3);
  });

  describe('the Redis fallback gauge', function () {
    before(async function () {
      await requireRedis(this);
    });

    it('reads 0 while counting in Redis and 1 once Redis is gone and the instance counts on its share', async function () {
      this.timeout(15_000);
      const redis = await startRedisServer();
      const limiter = createRedisRateLimiter({
        target: redisAt(redis.url), limit: 100, keyPrefix: `pcat:test:metrics:${process.pid}:`,
      });
      try {
        await limiter.ready();
        const metrics = new PrometheusMetrics();
        metrics.watchRedisFallback(() => limiter.usingFallback());
        await limiter.consume('key-a');
        expect(await gauge(metrics, 'pcat_rate_limiter_redis_fallback')).to.equal(0);
        await redis.kill();
        await limiter.consume('key-a');
        expect(await gauge(metrics, 'pcat_rate_limiter_redis_fallback')).to.equal(1);
      } finally {
        await limiter.close();
        await redis.kill();
      }
    });
  });
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function send(url: string, method: string, path = new URL(url).pathname): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the metrics listener', function () {
  it('serves the exposition at /metrics only, to GET and HEAD', async function () {
    const metrics = new PrometheusMetrics();
    const server = await startMetricsServer(metrics, { port: 0, host: '127.0.0.1' });
    try {
      expect(server.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const get = await send(server.url, 'GET', '/metrics?from=prometheus');
      expect(get.status).to.equal(200);
      expect(get.headers['cache-control']).to.equal('no-store');
      expect(parsePrometheusTextFormat(get.body).map((f) => f.name)).to.include('pcat_http_requests_total');
      const head = await send(server.url, 'HEAD');
      expect(head.status).to.equal(200);
      expect(head.body).to.equal('');
      expect(Number(head.headers['content-length'])).to.be.greaterThan(0);
      const post = await send(server.url, 'POST');
      expect(post.status).to.equal(405);
      expect(post.headers.allow).to.equal('GET, HEAD');
      expect((await send(server.url, 'GET', '/')).status).to.equal(404);
      expect((await send(server.url, 'GET', '/metrics/extra')).status).to.equal(404);
    } finally {
      await server.close();
    }
  });

  it('answers a DNS name other than its loopback names with 421 (a page rebinding its name to 127.0.0.1 reads nothing), and a POST with a body with 413', async function () {
    const server = await startMetricsServer(new PrometheusMetrics(), { port: 0, host: '127.0.0.1' });
    try {
      for (const host of ['localhost:9464', '127.0.0.1', '[::1]:9464']) expect((await exchangeOnce(server.url, { headers: { Host: host } })).status, host).to.equal(200);
      const rebound = await exchangeOnce(server.url, { headers: { Host: 'attacker.example:9464' } });
      expect([rebound.status, rebound.text]).to.deep.equal([421, 'This server does not answer to that host name.\n']);
      expect((await exchangeOnce(server.url, { method: 'POST', body: 'x'.repeat(100) })).status).to.equal(413);
    } finally {
      await server.close();
    }
  });

  it('closes with a scraper\'s keep-alive connection still open, without waiting out the grace period', async function () {
    this.timeout(10_000);
    const metrics = new PrometheusMetrics();
    const server = await startMetricsServer(metrics, { port: 0, host: '127.0.0.1' });
    const response = await fetch(server.url);
    expect(response.status).to.equal(200);
    await response.text();
    // A minute of grace, far past this test's timeout: the idle keep-alive connection must be closed, not waited for.
    await server.close(60_000);
    await fetch(server.url).then(
      () => expect.fail('the listener still answers'),
      (error: unknown) => expect(error).to.be.instanceOf(TypeError),
    );
  });
});
