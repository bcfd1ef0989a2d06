import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { startMetricsServer, type RunningMetricsServer } from '../src/adapters/metrics/metrics-server.js';
import { PrometheusMetrics } from '../src/adapters/metrics/prometheus-metrics.js';
import { KEYS } from './fixtures/catalog-fixture.js';
import { memoryInfrastructure, startTestServer, type TestServer } from './support/test-server.js';

/*
 * The exposition a running service serves, checked by Prometheus's own linter: `promtool check
 * metrics` must find nothing, neither an error nor a lint warning (names, types, units, HELP).
 * promtool comes with Debian's `prometheus` package, which `.ci/run` installs.
 */

const PROMTOOL = process.env.PROMTOOL ?? 'promtool';

interface Verdict {
  readonly code: number | null;
  readonly output: string;
}

/** `promtool check metrics` on `text` through its stdin: its exit code and everything it wrote. */
function checkMetrics(text: string): Promise<Verdict> {
  return new Promise((resolve, reject) => {
    const child = spawn(PROMTOOL, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end(text);
  });
}

/** Whether promtool runs here; without it the suite is skipped loudly, except under CI=true, where it fails. */
function requirePromtool(context: Mocha.Context): void {
  const probe = spawnSync(PROMTOOL, ['--version'], { encoding: 'utf8' });
  if (probe.error === undefined && probe.status === 0) return;
  const reason = `${PROMTOOL} cannot be run (${probe.error?.message ?? `exit ${String(probe.status)}`})`;
  if (process.env.CI === 'true') throw new Error(`${reason}, and CI=true forbids skipping: install Debian's prometheus package`);
  process.stderr.write(`\n!!! ${reason}: SKIPPING the promtool check of /metrics (apt-get install prometheus) !!!\n\n`);
  context.skip();
}

describe('metrics (/metrics) under `promtool check metrics`', function () {
  this.timeout(30_000);
  const running: { close(): Promise<void> }[] = [];
  before(function () {
    requirePromtool(this);
  });
  afterEach(async function () {
    for (const item of running.splice(0).reverse()) await item.close();
  });

  it('finds nothing to report in a scrape of a service that answered 200, 401 and 429, every figure present', async function () {
    const metrics = new PrometheusMetrics();
    // What the MySQL storage and the Redis limiter would report, so their figures are in the scrape too.
    metrics.watchDatabasePool(() => ({ inUse: 1, idle: 2, waiting: 0, waitedSeconds: 0.5 }));
    metrics.watchResponseCache({ entries: 3, bytes: 28_000 });
    metrics.watchRedisFallback(() => false);
    metrics.watchRedisSlowCounts(() => 0);
    // Two a window, so the third request of a key is refused.
    const server: TestServer = await startTestServer({ ...await memoryInfrastructure({ limit: 2 }), metrics });
    running.push(server);
    const metricsServer: RunningMetricsServer = await startMetricsServer(metrics, { port: 0, host: '127.0.0.1' });
    running.push(metricsServer);

    const acme = { headers: { 'X-API-Key': KEYS.acme } };
    const statuses = [
      (await server.request('/api/v1/public/sku/TENT-2P', acme)).status,
      (await server.request('/api/v1/public/sku/TENT-2P')).status,
      (await server.request('/api/v1/public/products/1', acme)).status,
      (await server.request('/api/v1/public/sku/TENT-2P', acme)).status,
    ];
    expect(statuses).to.deep.equal([200, 401, 200, 429]);

    const response = await fetch(metricsServer.url);
    expect(response.status).to.equal(200);
    const text = await response.text();
    for (const name of ['pcat_http_requests_total', 'pcat_http_request_duration_seconds_bucket', 'pcat_auth_failures_total',
      'pcat_rate_limit_rejections_total', 'pcat_db_pool_connections', 'nodejs_active_handles']) {
      expect(text, name).to.match(new RegExp(`^${name}\\{`, 'm'));
    }

    const verdict = await checkMetrics(text);
    expect(verdict, verdict.output).to.deep.equal({ code: 0, output: '' });
  });
});
