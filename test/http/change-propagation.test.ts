import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { importCatalog } from '../support/import.js';
import { hashApiKey } from '../../src/domain/api-key.js';
import { fixtureCatalog, fixtureDocument, KEYS } from '../fixtures/catalog-fixture.js';
import { cli } from '../support/cli-process.js';
import { useTestDatabase } from '../support/mariadb.js';
import { freePort, requireRedis, startRedisServer, type RedisServerProcess } from '../support/redis.js';
import { expectNoKeyInOutput, logLines } from '../support/service-logs.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

/*
 * Two real service processes on one MariaDB database and one redis-server of the test's own, with
 * a response cache of an hour: only the version tokens can make a change show up at once. Writes go
 * through the real CLI, as an operator makes them.
 */

const SKU_PATH = '/api/v1/public/sku/TENT-2P';
const AN_HOUR_MS = '3600000';

interface Answer {
  readonly status: number;
  readonly etag: string | null;
  readonly body: { error?: string; data?: { product: { pdp_urls: Array<{ json_ld: { transcript?: string } | null }> } } };
}

async function get(url: string, key: string, path = SKU_PATH): Promise<Answer> {
  const response = await fetch(`${url}${path}`, { headers: { 'X-API-Key': key }, signal: AbortSignal.timeout(5_000) });
  return { status: response.status, etag: response.headers.get('etag'), body: (await response.json()) as Answer['body'] };
}

function transcriptOf(answer: Answer): string | undefined {
  return answer.body.data?.product.pdp_urls[0]?.json_ld?.transcript;
}

/** The fixture with TENT-2P's first video's transcript refined. */
function refinedDocument(transcript: string): Record<string, unknown> {
  const document = fixtureDocument() as { partners: Array<{ products: Array<{ sku: string; videos: Array<Record<string, unknown>> }> }> };
  const tent = document.partners[0]!.products.find((p) => p.sku === 'TENT-2P')!;
  tent.videos[0] = { ...tent.videos[0], transcript };
  return document;
}

/** The bytes the instances behind a capturing proxy have sent towards its server so far. */
function bytesSent(proxy: TcpProxy): number {
  return proxy.sent().reduce((total, chunks) => total + chunks.reduce((sum, chunk) => sum + chunk.length, 0), 0);
}

describe('two instances on one database and one Redis, answers cached for an hour', function () {
  this.timeout(120_000);
  const testDb = useTestDatabase();
  const services: ServiceProcess[] = [];
  let redis: RedisServerProcess | undefined;
  let proxy: TcpProxy | undefined;
  /*
   * In front of the database, counting what an instance sends it: a statement is bytes on the wire.
   * MariaDB's own count (SHOW GLOBAL STATUS LIKE 'Questions') is the server's, and so counts the
   * statements of the test files running beside this one.
   */
  let watch: TcpProxy | undefined;
  let dir = '';

  before(async function () {
    await requireRedis(this);
    await importCatalog(testDb.db, fixtureCatalog());
    dir = mkdtempSync(join(tmpdir(), 'pcat-changes-'));
  });
  beforeEach(async function () {
    redis = await startRedisServer();
  });
  afterEach(async function () {
    expectNoKeyInOutput(services);
    for (const service of services.splice(0)) service.kill();
    await proxy?.close();
    proxy = undefined;
    await watch?.close();
    watch = undefined;
    await redis?.kill();
    // The next test starts from the fixture again.
    await importCatalog(testDb.db, fixtureCatalog());
  });
  after(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  /** The operator's environment: the same database and Redis as the instances. */
  const operatorEnv = (): Record<string, string> => ({ DATABASE_URL: testDb.url, REDIS_URL: redis!.url });

  /** The test database's URL through a capturing proxy of this test's own (`watch`). */
  async function watchedDatabaseUrl(): Promise<string> {
    const target = new URL(testDb.url);
    watch = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, { capture: true });
    const url = new URL(testDb.url);
    url.port = String(watch.port);
    return url.toString();
  }

  async function startInstances(count: number, redisUrl = redis!.url, databaseUrl = testDb.url): Promise<string[]> {
    const started = Array.from({ length: count }, () => startService({
      STORAGE: 'mysql', DATABASE_URL: databaseUrl, RATE_LIMIT_STORE: 'redis', REDIS_URL: redisUrl, CACHE_TTL_MS: AN_HOUR_MS,
      // The tests send a key past 100 requests a minute while they wait for a state; what is counted
      // on an instance's share during an outage reaches Redis once it is back (rate limits are other tests').
      RATE_LIMIT_PER_MINUTE: '1000000',
      // The statement counts below are the requests' own: the webhook deliveries' poll waits past them.
      WEBHOOK_POLL_MS: '60000',
    }));
    services.push(...started);
    return Promise.all(started.map(async (s) => (await s.waitFor(/"url":"(http:\/\/[^"]+)"/))[1]!));
  }

  async function issueKey(): Promise<{ id: string; key: string }> {
    const run = await cli(['keys', 'issue', '--partner', 'acme', '--json'], operatorEnv());
    expect(run.code, run.stderr).to.equal(0);
    return run.json() as { id: string; key: string };
  }

  async function revokeKey(id: string, env = operatorEnv()): Promise<void> {
    const run = await cli(['keys', 'revoke', id], env);
    expect(run.code, run.stderr).to.equal(0);
  }

  it('refuses a key revoked through the CLI on its very next request on both, and serves a key issued through it on its first', async function () {
    const [first, second] = await startInstances(2);
    // Both instances hold the fixture's keys and have cached the answer.
    for (const url of [first!, second!]) expect((await get(url, KEYS.acme)).status).to.equal(200);

    const issued = await issueKey();
    for (const url of [first!, second!]) expect((await get(url, issued.key)).status, url).to.equal(200);

    await revokeKey(issued.id);
    for (const url of [first!, second!]) {
      const refused = await get(url, issued.key);
      expect(refused.status, url).to.equal(401);
      expect(refused.body.error).to.equal('invalid_api_key');
    }
    // The fixture's key was untouched.
    for (const url of [first!, second!]) expect((await get(url, KEYS.acme)).status).to.equal(200);
  });

  it('applies a key change on both by reading only the key it changed, with 2,000 other keys held', async function () {
    const others = Array.from({ length: 2_000 }, (_, i) => ({
      id: `bulk-${String(i)}`, partner_id: 'acme', sha256: hashApiKey(`pcat_live_${String(i).padStart(40, 'b')}`), label: null, origin: 'cli' as const,
    }));
    await testDb.db.insertInto('api_keys').values(others).execute();
    try {
      const urls = await startInstances(2, redis!.url, await watchedDatabaseUrl());
      const issued = await issueKey();
      for (const url of urls) expect((await get(url, issued.key)).status).to.equal(200);
      const before = watch!.delivered();
      await revokeKey(issued.id);
      for (const url of urls) expect((await get(url, issued.key)).status, url).to.equal(401);
      // The whole set is at least 2,000 hashes of 64 characters (128 KB); the change is its one row and the counter, on each instance.
      expect(watch!.delivered() - before, 'bytes both instances read from the database for the change').to.be.below(2 * 2_000);
      for (const url of urls) {
        expect((await get(url, `pcat_live_${String(1_999).padStart(40, 'b')}`)).status, 'a held key').to.equal(200);
        expect((await get(url, KEYS.acme)).status).to.equal(200);
      }
    } finally {
      await testDb.db.deleteFrom('api_keys').where('id', 'like', 'bulk-%').execute();
    }
  });

  it('is not ready until it holds the key set, and is once it does', async function () {
    // The keys cannot be read (the table locked), though the database answers.
    const locker = await createConnection({ uri: testDb.url });
    await locker.query('lock tables api_keys write');
    let url: string;
    try {
      [url] = (await startInstances(1)) as [string];
      expect((await fetch(`${url}/readyz`)).status, '/readyz without the key set').to.equal(503);
      expect((await fetch(`${url}/healthz`)).status).to.equal(200);
    } finally {
      await locker.query('unlock tables');
      await locker.end();
    }
    while ((await fetch(`${url}/readyz`)).status !== 200) await sleep(50);
    expect((await get(url, KEYS.acme)).status).to.equal(200);
    await services[0]!.waitFor(/"msg":"keys: held; ready"/);
    expect(logLines(services[0]!).map((line) => line.msg)).to.include('keys: not read; tried again every second, not ready until they are');
  });

  it('shows a re-imported, refined transcript on the next lookup on both', async function () {
    const [first, second] = await startInstances(2);
    const before = await Promise.all([first!, second!].map((url) => get(url, KEYS.acme)));
    for (const answer of before) expect(transcriptOf(answer)).to.equal('Transcript of tent-pitch.');

    const file = join(dir, 'refined.json');
    writeFileSync(file, JSON.stringify(refinedDocument('A refined transcript.')));
    const run = await cli(['import', file], operatorEnv());
    expect(run.code, run.stderr).to.equal(0);

    for (const [i, url] of [first!, second!].entries()) {
      const after = await get(url, KEYS.acme);
      expect(after.status).to.equal(200);
      expect(transcriptOf(after), url).to.equal('A refined transcript.');
      expect(after.etag).to.not.equal(before[i]!.etag);
    }
  });

  it('replaces the tokens of only the catalogs a re-import changed: other partners, the sandboxes and the keys keep theirs, and their cached answers', async function () {
    const [url] = await startInstances(1, redis!.url, await watchedDatabaseUrl());
    const SHARED_PATH = '/api/v1/public/sku/SHARED-1';
    const tokenKeys = ['pcat:{v}:keys', 'pcat:{v}:catalog:acme', 'pcat:{v}:catalog:globex', 'pcat:{v}:catalog:~acme', 'pcat:{v}:catalog:~globex'];
    const tokens = async (): Promise<(string | null)[]> => {
      const client = new Redis(redis!.url);
      try {
        return await client.mget(...tokenKeys);
      } finally {
        client.disconnect();
      }
    };
    // Both partners' answers held, under the tokens the instance read (or started) with them.
    expect((await get(url!, KEYS.globex, SHARED_PATH)).status).to.equal(200);
    expect(transcriptOf(await get(url!, KEYS.acme))).to.equal('Transcript of tent-pitch.');
    const before = await tokens();

    const file = join(dir, 'refined-acme.json');
    writeFileSync(file, JSON.stringify(refinedDocument('Refined for acme alone.')));
    const run = await cli(['import', file], operatorEnv());
    expect(run.code, run.stderr).to.equal(0);

    const after = await tokens();
    expect(after[1], 'acme\'s token').to.not.equal(before[1]);
    expect(Object.fromEntries(tokenKeys.map((key, i) => [key, after[i]])), 'the other tokens').to.deep.equal({ ...Object.fromEntries(tokenKeys.map((key, i) => [key, before[i]])), [tokenKeys[1]!]: after[1] });
    const start = bytesSent(watch!);
    expect((await get(url!, KEYS.globex, SHARED_PATH)).status).to.equal(200);
    expect(bytesSent(watch!) - start, 'bytes sent to the database for globex\'s held answer').to.equal(0);
    expect(transcriptOf(await get(url!, KEYS.acme))).to.equal('Refined for acme alone.');
  });

  it('answers a flood of made-up keys without a database query, and cached lookups without one either', async function () {
    const [url] = await startInstances(1, redis!.url, await watchedDatabaseUrl());
    expect((await get(url!, KEYS.acme)).status).to.equal(200);
    const start = bytesSent(watch!);
    for (let i = 0; i < 25; i += 1) {
      const madeUp = `pcat_live_${String(i).padStart(40, 'x')}`;
      expect((await get(url!, madeUp)).status).to.equal(401);
    }
    for (let i = 0; i < 25; i += 1) expect((await get(url!, KEYS.acme)).status).to.equal(200);
    expect(bytesSent(watch!) - start, 'bytes sent to the database').to.equal(0);
  });

  it('still refuses a revoked key after Redis is flushed, and after Redis restarts empty', async function () {
    const [first, second] = await startInstances(2);
    const issued = [await issueKey(), await issueKey()];
    for (const url of [first!, second!]) for (const { key } of issued) expect((await get(url, key)).status).to.equal(200);

    await revokeKey(issued[0]!.id);
    const client = new Redis(redis!.url);
    await client.flushall();
    await client.quit();
    for (const url of [first!, second!]) expect((await get(url, issued[0]!.key)).status, url).to.equal(401);

    await revokeKey(issued[1]!.id);
    const port = new URL(redis!.url).port;
    await redis!.kill();
    redis = await startRedisServer(Number(port));
    for (const url of [first!, second!]) expect((await get(url, issued[1]!.key)).status, url).to.equal(401);
    for (const url of [first!, second!]) expect((await get(url, KEYS.acme)).status, url).to.equal(200);
  });

  it('lets a revocation and a re-import bite through the database while Redis is cut, and goes back to what it holds once Redis returns', async function () {
    const target = new URL(redis!.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    const [url] = await startInstances(1, `redis://127.0.0.1:${proxy.port}`, await watchedDatabaseUrl());
    const service = services[0]!;
    const issued = await issueKey();
    expect((await get(url!, issued.key)).status).to.equal(200);
    expect(transcriptOf(await get(url!, KEYS.acme))).to.equal('Transcript of tent-pitch.');

    proxy.blackHole();
    // The operator still reaches Redis, the instance does not: it learns nothing from the tokens.
    await revokeKey(issued.id);
    const file = join(dir, 'refined-during-cut.json');
    writeFileSync(file, JSON.stringify(refinedDocument('Refined while Redis was away.')));
    const run = await cli(['import', file], operatorEnv());
    expect(run.code, run.stderr).to.equal(0);
    expect((await get(url!, issued.key)).status).to.equal(401);
    const during = await get(url!, KEYS.acme);
    expect(during.status).to.equal(200);
    expect(transcriptOf(during)).to.equal('Refined while Redis was away.');
    // A silent path is taken as a lost Redis once counts have waited a second on it (a slow count alone is not).
    const lost = (): boolean => logLines(service).some((l) => l.level === 40 && l.msg.includes('Redis unavailable'));
    const lostBy = Date.now() + 10_000;
    while (!lost() && Date.now() < lostBy) expect((await get(url!, KEYS.acme)).status).to.equal(200);
    expect(lost(), 'the instance took Redis as lost').to.equal(true);
    expect((await get(url!, issued.key)).status).to.equal(401);

    proxy.restore();
    const deadline = Date.now() + 10_000;
    const back = (): boolean => logLines(service).some((l) => l.msg.includes('Redis is back'));
    // The breaker asks Redis again on a request after its cool-down.
    while (!back() && Date.now() < deadline) {
      await get(url!, KEYS.acme);
      await sleep(200);
    }
    expect(back(), 'the instance went back to Redis').to.equal(true);
    expect((await get(url!, issued.key)).status).to.equal(401);
    expect(transcriptOf(await get(url!, KEYS.acme))).to.equal('Refined while Redis was away.');
    // Back on the fast path: keys and answers come from memory again.
    const start = bytesSent(watch!);
    for (let i = 0; i < 20; i += 1) expect((await get(url!, KEYS.acme)).status).to.equal(200);
    expect(bytesSent(watch!) - start, 'bytes sent to the database').to.equal(0);
  });

  it('applies key changes announced while the database is cut off from the instances: a revoked key refused on its next request, the others served, a key issued meanwhile 503 until the database returns', async function () {
    const target = new URL(testDb.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    const viaProxy = new URL(testDb.url);
    viaProxy.port = String(proxy.port);
    const urls = await startInstances(2, redis!.url, viaProxy.toString());
    const kept = await issueKey();
    const doomed = await issueKey();
    // Every key's answer is held by both instances: with the database away, lookups come from there.
    for (const url of urls) for (const key of [KEYS.acme, kept.key, doomed.key]) expect((await get(url, key)).status).to.equal(200);
    for (const url of urls) expect((await get(url, KEYS.globex, '/api/v1/public/sku/SHARED-1')).status).to.equal(200);

    proxy.blackHole();
    // The operator still reaches the database and Redis; the instances reach only Redis.
    await revokeKey(doomed.id);
    for (const url of urls) {
      const started = Date.now();
      const statuses = await Promise.all([doomed.key, KEYS.acme, kept.key, KEYS.unknown].map(async (key) => (await get(url, key)).status));
      process.stdout.write(`      database cut, after a revocation: revoked, acme, kept, made-up key: ${statuses.join(' ')} in ${Date.now() - started} ms\n`);
      const refused = await get(url, doomed.key);
      expect(refused.status, `${url}: the revoked key on its next request`).to.equal(401);
      expect(refused.body.error).to.equal('invalid_api_key');
      for (const key of [KEYS.acme, kept.key]) expect((await get(url, key)).status, url).to.equal(200);
      expect((await get(url, KEYS.globex, '/api/v1/public/sku/SHARED-1')).status, url).to.equal(200);
      // No key was issued since: a made-up key is still told apart without the database.
      expect((await get(url, KEYS.unknown)).status, url).to.equal(401);
    }

    const issued = await issueKey();
    for (const url of urls) {
      const response = await fetch(`${url}${SKU_PATH}`, { headers: { 'X-API-Key': issued.key }, signal: AbortSignal.timeout(5_000) });
      expect(response.status, `${url}: a key issued while the database is away cannot be decided`).to.equal(503);
      expect(response.headers.get('retry-after')).to.match(/^[1-9][0-9]*$/);
      expect(((await response.json()) as { error: string }).error).to.equal('service_unavailable');
      expect((await get(url, KEYS.unknown)).status, url).to.equal(503);
      expect((await get(url, doomed.key)).status, url).to.equal(401);
      for (const key of [KEYS.acme, kept.key]) expect((await get(url, key)).status, url).to.equal(200);
    }

    proxy.restore();
    for (const url of urls) {
      const deadline = Date.now() + 10_000;
      let status = 0;
      while (status !== 200 && Date.now() < deadline) {
        status = (await get(url, issued.key)).status;
        if (status !== 200) await sleep(200);
      }
      expect(status, `${url}: the key issued meanwhile, once the database answers`).to.equal(200);
      expect((await get(url, KEYS.unknown)).status, url).to.equal(401);
      expect((await get(url, doomed.key)).status, url).to.equal(401);
    }
  });

  it('exits 3 from a revocation it cannot announce, saying the revocation stands, and the instances refuse the key once told', async function () {
    const [url] = await startInstances(1);
    const issued = await issueKey();
    expect((await get(url!, issued.key)).status).to.equal(200);
    const unreachable = `redis://127.0.0.1:${await freePort()}`;
    const run = await cli(['keys', 'revoke', issued.id], { DATABASE_URL: testDb.url, REDIS_URL: unreachable });
    expect(run.code).to.equal(3);
    expect(run.stdout).to.match(new RegExp(`^revoked key ${issued.id} \\(since `));
    expect(run.stderr).to.match(/^warning: the revocation of key .* is committed to the database, but the running instances could not be told through Redis/);
    // Redis stayed up for the instance, which holds the key and was not told: until the age bound
    // (CACHE_TTL_MS, an hour here) it still serves it. The operator is told so, and announces by
    // revoking again with Redis reachable.
    expect((await get(url!, issued.key)).status).to.equal(200);
    await revokeKey(issued.id);
    expect((await get(url!, issued.key)).status).to.equal(401);
  });
});
