import { expect } from 'chai';
import { Redis } from 'ioredis';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fixtureDocument, KEYS } from '../fixtures/catalog-fixture.js';
import { freePort, requireRedis, startRedisServer, type RedisServerProcess } from '../support/redis.js';
import { expectNoKeyInOutput, logLines } from '../support/service-logs.js';
import { startService, type ServiceProcess } from '../support/service-process.js';

/*
 * The real service on a throwaway redis-server that is killed (SIGKILL) mid-run and started
 * again on the same port: answers never stop, one warning is logged, and counting goes back
 * to Redis (docs/decisions.md, rate limit).
 */

const SKU_PATH = '/api/v1/public/sku/TENT-2P';
/** The service's Redis key for the fixture key `acme-prod` (prefix `pcat:rl:` + key id, never the key). */
const COUNTER = 'pcat:rl:acme-prod';
const WARN = 40;

interface Answer {
  readonly status: number;
  readonly limit: string | null;
  readonly remaining: string | null;
  readonly reset: string | null;
}

async function lookup(url: string, i: number): Promise<Answer> {
  // Both headers in turn, so the log-capture check below covers each.
  const headers: Record<string, string> = i % 2 === 0 ? { 'X-API-Key': KEYS.acme } : { Authorization: `Bearer ${KEYS.acme}`, 'X-API-Key': KEYS.globex };
  const response = await fetch(`${url}${SKU_PATH}`, { headers, signal: AbortSignal.timeout(5_000) });
  await response.arrayBuffer();
  return {
    status: response.status,
    limit: response.headers.get('ratelimit-limit'),
    remaining: response.headers.get('ratelimit-remaining'),
    reset: response.headers.get('ratelimit-reset'),
  };
}

function expectLimited(answer: Answer, what: string): void {
  expect(answer.status, what).to.equal(200);
  expect(answer.limit, what).to.equal('100');
  expect(Number(answer.remaining), what).to.be.within(0, 99);
  expect(Number(answer.reset), what).to.be.within(1, 60);
}

async function counterIn(url: string): Promise<number | null> {
  const client = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, connectTimeout: 1_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const value = await client.get(COUNTER);
    return value === null ? null : Number(value);
  } finally {
    client.disconnect();
  }
}

describe('the service when its Redis is lost and comes back', function () {
  this.timeout(60_000);
  let service: ServiceProcess | undefined;
  const redisServers: RedisServerProcess[] = [];
  let dir: string | undefined;

  before(async function () {
    await requireRedis(this);
  });
  afterEach(async function () {
    service?.kill();
    service = undefined;
    await Promise.all(redisServers.splice(0).map((r) => r.kill()));
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('keeps answering with RateLimit headers, warns once, and counts in the new Redis once it is back', async function () {
    const port = await freePort();
    const redis = await startRedisServer(port);
    redisServers.push(redis);
    dir = mkdtempSync(join(tmpdir(), 'pcat-redis-loss-'));
    const catalogFile = join(dir, 'catalog.json');
    writeFileSync(catalogFile, JSON.stringify(fixtureDocument()));
    service = startService({ CATALOG_FILE: catalogFile, RATE_LIMIT_STORE: 'redis', REDIS_URL: redis.url });
    const [, url] = await service.waitFor(/"url":"(http:\/\/[^"]+)"/);
    const warnings = (): string[] => logLines(service!).filter((l) => l.level === WARN && l.msg.includes('Redis')).map((l) => l.msg);

    // Redis up: Redis does the counting.
    for (let i = 0; i < 5; i += 1) {
      const answer = await lookup(url!, i);
      expectLimited(answer, `before the loss, request ${i + 1}`);
      expect(answer.remaining).to.equal(String(99 - i));
    }
    expect(await counterIn(redis.url)).to.equal(5);
    expect(warnings()).to.deep.equal([]);

    // Redis killed: every request still answered, across several cool-downs (1 s each) of the breaker.
    await redis.kill();
    const lossStarted = Date.now();
    let during = 0;
    // At most 60 requests: on its own the instance admits its share of what the key had left, 95 of 100.
    while (Date.now() - lossStarted < 3_000 && during < 60) {
      expectLimited(await lookup(url!, during), `Redis down, request ${during + 1}`);
      during += 1;
      await sleep(50);
    }
    expect(during, 'requests answered while Redis was down').to.be.above(20);
    // One warning for the whole outage, not one per request or per probe.
    expect(warnings(), service.stdout()).to.have.length(1);
    expect(logLines(service).filter((l) => l.level >= 50), 'no error lines').to.deep.equal([]);

    // Redis back, empty, on the same port: once the breaker's probe succeeds, the count lands in Redis again.
    redisServers.push(await startRedisServer(port));
    const deadline = Date.now() + 10_000;
    let after = 0;
    let counted: number | null = null;
    while (counted === null) {
      if (Date.now() > deadline) throw new Error(`no ${COUNTER} in the restarted Redis within 10 s; stdout: ${service.stdout()}`);
      expectLimited(await lookup(url!, after), `Redis back, request ${after + 1}`);
      after += 1;
      counted = await counterIn(redis.url);
      if (counted === null) await sleep(100);
    }
    // From now on each request is counted in Redis, and the headers report Redis's count.
    for (let i = 1; i <= 3; i += 1) {
      const answer = await lookup(url!, i);
      expectLimited(answer, `after the return, request ${i}`);
      expect(await counterIn(redis.url)).to.equal(counted + i);
      expect(answer.remaining).to.equal(String(100 - (counted + i)));
    }
    // The line reaches the test when the process writes it out: waited for, not read at once.
    await service.waitFor(/"level":30[^\n]*Redis is back/);
    expect(warnings(), 'still the one warning').to.have.length(1);

    expectNoKeyInOutput([service]);
  });

  it('starts and answers with a Redis that is down from the start, warning once, and uses it once it is up', async function () {
    const port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'pcat-redis-loss-'));
    const catalogFile = join(dir, 'catalog.json');
    writeFileSync(catalogFile, JSON.stringify(fixtureDocument()));
    service = startService({ CATALOG_FILE: catalogFile, RATE_LIMIT_STORE: 'redis', REDIS_URL: `redis://127.0.0.1:${port}` });
    const [, url] = await service.waitFor(/"url":"(http:\/\/[^"]+)"/);
    for (let i = 0; i < 10; i += 1) expectLimited(await lookup(url!, i), `no Redis yet, request ${i + 1}`);
    const redis = await startRedisServer(port);
    redisServers.push(redis);
    const deadline = Date.now() + 10_000;
    let i = 0;
    while ((await counterIn(redis.url)) === null) {
      if (Date.now() > deadline) throw new Error(`Redis never used after it came up; stdout: ${service.stdout()}`);
      expectLimited(await lookup(url!, i), `Redis up, request ${i + 1}`);
      i += 1;
      await sleep(100);
    }
    const redisWarnings = logLines(service).filter((l) => l.level === WARN && l.msg.includes('Redis'));
    expect(redisWarnings.length, service.stdout()).to.equal(1);
    expectNoKeyInOutput([service]);
  });
});
