import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureDocument, KEYS } from '../fixtures/catalog-fixture.js';
import { requireRedis, startRedisServer, type RedisServerProcess } from '../support/redis.js';
import { expectNoKeyInOutput, logLines } from '../support/service-logs.js';
import { startService, type ServiceProcess } from '../support/service-process.js';

/*
 * Two real service processes (src/main.ts, as operators start it) sharing one throwaway
 * redis-server: one limit per key across both (docs/decisions.md, rate limit).
 */

const SKU_PATH = '/api/v1/public/sku/TENT-2P';

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

async function get(url: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(`${url}${path}`, { headers, signal: AbortSignal.timeout(5_000) });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

describe('several instances sharing one Redis', function () {
  this.timeout(60_000);
  const services: ServiceProcess[] = [];
  const redisServers: RedisServerProcess[] = [];
  let dir: string | undefined;

  before(async function () {
    await requireRedis(this);
  });
  afterEach(async function () {
    for (const service of services.splice(0)) service.kill();
    await Promise.all(redisServers.splice(0).map((r) => r.kill()));
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** Two instances over the fixture catalog file and a fresh redis-server of this test's own. */
  async function startPair(extraEnv: Record<string, string> = {}): Promise<[string, string]> {
    const redis = await startRedisServer();
    redisServers.push(redis);
    dir = mkdtempSync(join(tmpdir(), 'pcat-multi-'));
    const catalogFile = join(dir, 'catalog.json');
    writeFileSync(catalogFile, JSON.stringify(fixtureDocument()));
    const env = { CATALOG_FILE: catalogFile, RATE_LIMIT_STORE: 'redis', REDIS_URL: redis.url, ...extraEnv };
    const pair = [startService(env), startService(env)];
    services.push(...pair);
    const urls = await Promise.all(pair.map(async (s) => (await s.waitFor(/"url":"(http:\/\/[^"]+)"/))[1]!));
    for (const service of pair) {
      // Connected to Redis at start, not limiting on its own.
      expect(logLines(service).filter((l) => l.level >= 40), service.stdout()).to.deep.equal([]);
    }
    return [urls[0]!, urls[1]!];
  }

  it('counts one limit per key across both: 100 alternating requests pass, the 101st on either gets 429; another key still passes', async function () {
    const [first, second] = await startPair();
    for (let i = 0; i < 100; i += 1) {
      const answer = await get(i % 2 === 0 ? first : second, SKU_PATH, { 'X-API-Key': KEYS.acme });
      expect(answer.status, `request ${i + 1}`).to.equal(200);
      expect(answer.headers.get('ratelimit-limit'), `request ${i + 1}`).to.equal('100');
      // Counting down across instances proves the count is shared, not kept per process.
      expect(answer.headers.get('ratelimit-remaining'), `request ${i + 1}`).to.equal(String(99 - i));
      expect(Number(answer.headers.get('ratelimit-reset'))).to.be.within(1, 60);
    }
    for (const url of [first, second]) {
      const refused = await get(url, SKU_PATH, { Authorization: `Bearer ${KEYS.acme}` });
      expect(refused.status).to.equal(429);
      expect(refused.body.error).to.equal('rate_limit_exceeded');
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).to.be.within(1, 60);
      expect(refused.body.message).to.include(String(retryAfter));
      expect(refused.headers.get('ratelimit-remaining')).to.equal('0');
    }
    // A second key of the same partner, and a key of another partner, have limits of their own.
    const otherKey = await get(second, SKU_PATH, { 'X-API-Key': KEYS.acmeSecond });
    expect(otherKey.status).to.equal(200);
    expect(otherKey.headers.get('ratelimit-remaining')).to.equal('99');
    const otherPartner = await get(first, '/api/v1/public/sku/GLOBEX-ONLY', { Authorization: `Bearer ${KEYS.globex}` });
    expect(otherPartner.status).to.equal(200);
    expect(otherPartner.headers.get('ratelimit-remaining')).to.equal('99');
  });

  it('counts every authenticated answer (404, 400) against the shared limit too', async function () {
    const [first, second] = await startPair();
    const paths = ['/api/v1/public/sku/NO-SUCH', '/api/v1/public/sku/bad%20sku', '/api/v1/public/products/0', SKU_PATH];
    for (let i = 0; i < 100; i += 1) {
      const answer = await get(i % 2 === 0 ? first : second, paths[i % paths.length]!, { 'X-API-Key': KEYS.globex });
      expect([200, 400, 404], `request ${i + 1}`).to.include(answer.status);
      expect(answer.headers.get('ratelimit-remaining'), `request ${i + 1}`).to.equal(String(99 - i));
    }
    expect((await get(second, '/api/v1/public/sku/GLOBEX-ONLY', { 'X-API-Key': KEYS.globex })).status).to.equal(429);
  });

  it('admits about one limit between them when Redis is killed mid-window, for a fresh key and a half-used one', async function () {
    const [first, second] = await startPair({ RATE_LIMIT_PER_MINUTE: '20' });
    const urls = [first, second];
    /** Sends `times` requests alternately to the two instances; how many were admitted (answered, 200 or 404, rather than refused 429). */
    const alternate = async (key: string, times: number): Promise<number> => {
      let admitted = 0;
      for (let i = 0; i < times; i += 1) if ((await get(urls[i % 2]!, SKU_PATH, { 'X-API-Key': key })).status !== 429) admitted += 1;
      return admitted;
    };
    // Each instance tells Redis it is there at most once a second: within a second and a bit, each has heard of the other.
    await alternate(KEYS.acmeSecond, 2);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await alternate(KEYS.acmeSecond, 2);
    const halfBefore = await alternate(KEYS.globex, 10);
    expect(halfBefore).to.equal(10);

    await redisServers[0]!.kill();
    const fresh = await alternate(KEYS.acme, 100);
    const half = halfBefore + (await alternate(KEYS.globex, 100));
    for (const service of services) expect(logLines(service).filter((l) => l.level === 40), 'each fell back once').to.have.length(1);
    // Counting from zero on each, the two admitted 40 and 50; on their shares, one limit (20) and a little over at most.
    expect(fresh, 'fresh key').to.be.within(20, 24);
    expect(half, 'half-used key').to.be.within(20, 24);
  });

  it('writes no key, nor its random part, nor its hash, to any output of either process, whatever header or place it came in', async function () {
    const [first, second] = await startPair();
    const presented: Record<string, string>[] = [
      { Authorization: `Bearer ${KEYS.acme}`, 'X-API-Key': KEYS.globex },
      { Authorization: `bearer ${KEYS.acmeRevoked}`, 'X-API-Key': KEYS.acmeSecond },
      { Authorization: `Basic ${KEYS.unknown}`, 'X-API-Key': KEYS.acme },
      { Authorization: KEYS.globex },
      { 'X-API-Key': KEYS.acmeRevoked },
      { 'X-API-Key': KEYS.unknown },
      { Authorization: '  ', 'X-API-Key': KEYS.acmeSecond },
    ];
    const paths = [SKU_PATH, `/api/v1/public/sku/${KEYS.acme}`, `${SKU_PATH}?key=${KEYS.globex}&api_key=${KEYS.acmeSecond}`, `/api/v1/public/products/${KEYS.unknown}`, `/nowhere/${KEYS.acmeRevoked}`];
    const statuses = new Set<number>();
    for (const [i, headers] of presented.entries()) {
      for (const path of paths) {
        statuses.add((await get(i % 2 === 0 ? first : second, path, headers)).status);
      }
    }
    // The requests went through every kind of answer that logs a line: success, refusal and errors.
    expect([...statuses].sort()).to.include.members([200, 400, 401, 404]);
    // The log lines were written (one per request), so an empty output cannot pass for a clean one.
    // A line may reach this process's pipe a moment after its response: wait for it, within a deadline.
    const requestLines = (): unknown[] => services.flatMap((s) => logLines(s)).filter((l) => l.msg === 'request');
    const deadline = Date.now() + 5_000;
    while (requestLines().length < presented.length * paths.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(requestLines()).to.have.length(presented.length * paths.length);
    expectNoKeyInOutput(services);
  });
});

/* A key sent as X-Request-Id matches the plain-ID pattern; it must be neither echoed nor logged. */
describe('a key in the wrong header', function () {
  this.timeout(30_000);
  const services: ServiceProcess[] = [];
  afterEach(function () {
    for (const service of services.splice(0)) service.kill();
  });

  it('is not written to the log even when sent as X-Request-Id (it matches the "sane request id" pattern)', async function () {
    const service = startService({});
    services.push(service);
    const [, url] = await service.waitFor(/"url":"(http:\/\/[^"]+)"/);
    const [, demoKey] = await service.waitFor(/(pcat_live_[A-Za-z0-9]{40})/);
    for (const key of [KEYS.acme, demoKey!]) {
      const response = await fetch(`${url!}/api/v1/public/sku/TENT-2P`, { headers: { 'X-API-Key': demoKey!, 'X-Request-Id': key } });
      await response.arrayBuffer();
      expect(response.status).to.equal(200);
    }
    const deadline = Date.now() + 5_000;
    while (logLines(service).filter((l) => l.msg === 'request').length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expectNoKeyInOutput([service]);
    const logs = logLines(service);
    expect(logs.filter((l) => l.msg === 'request')).to.have.length(2);
    expect(JSON.stringify(logs)).to.not.include(demoKey!);
  });
});
