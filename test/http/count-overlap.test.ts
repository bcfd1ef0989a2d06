import { expect } from 'chai';
import { createRedisRateLimiter } from '../support/redis-rate-limiter.js';
import { fixtureCatalog, KEYS } from '../fixtures/catalog-fixture.js';
import { importCatalog } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';
import { requireRedis, startRedisServer, type RedisServerProcess } from '../support/redis.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { statementsRun } from '../support/mysql-statements.js';
import { redisAt } from '../../src/adapters/redis/redis-target.js';

/*
 * A lookup on MySQL with Redis limits: the count on Redis and the read of the answer from MariaDB,
 * each seen on the wire through a proxy of the test's own. The read starts while the count is under
 * way, and never for a key this instance cannot show has room: one it saw past its limit, or one it
 * never counted.
 */

const lookup = (sku: string): string => `/api/v1/public/sku/${sku}`;

async function get(url: string, path: string, key: string = KEYS.acme): Promise<number> {
  const response = await fetch(`${url}${path}`, { headers: { 'X-API-Key': key }, signal: AbortSignal.timeout(10_000) });
  await response.arrayBuffer();
  return response.status;
}

/** What the instance has sent MariaDB so far, as text: a statement's values are in it. */
function sentToDatabase(proxy: TcpProxy): string {
  return Buffer.concat(proxy.sent().flat()).toString('latin1');
}

describe('a lookup\'s count and its read', function () {
  this.timeout(60_000);
  const testDb = useTestDatabase();
  let redis: RedisServerProcess | undefined;
  let service: ServiceProcess | undefined;
  const proxies: TcpProxy[] = [];

  before(async function () {
    await requireRedis(this);
    await importCatalog(testDb.db, fixtureCatalog());
  });
  afterEach(async function () {
    service?.kill();
    service = undefined;
    for (const proxy of proxies.splice(0)) await proxy.close();
    await redis?.kill();
  });

  /** One instance on the production settings, its database and Redis each behind a proxy. */
  async function startInstance(env: Record<string, string> = {}): Promise<{ url: string; database: TcpProxy; redisPath: TcpProxy }> {
    redis = await startRedisServer();
    const database = await startTcpProxy({ host: new URL(testDb.url).hostname, port: Number(new URL(testDb.url).port) }, { capture: true });
    const redisPath = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(redis.url).port) });
    proxies.push(database, redisPath);
    const databaseUrl = new URL(testDb.url);
    databaseUrl.port = String(database.port);
    service = startService({
      STORAGE: 'mysql', DATABASE_URL: databaseUrl.toString(), RATE_LIMIT_STORE: 'redis', REDIS_URL: `redis://127.0.0.1:${redisPath.port}`,
      // The statements below are the lookups' own: the webhook deliveries' poll waits past them.
      WEBHOOK_POLL_MS: '60000',
      ...env,
    });
    const url = (await service.waitFor(/"url":"(http:\/\/[^"]+)"/))[1]!;
    return { url, database, redisPath };
  }

  it('sends the read to the database before Redis has answered the count, and answers once it has', async function () {
    const { url, database, redisPath } = await startInstance();
    // The partner's catalog token and the key's window, as this instance's last count saw them, and
    // the lookup's statement prepared on the pool's connection. More than one: a first count Redis
    // is slow to answer (on a loaded machine) is made on this instance's share, and leaves the next
    // request to wait for its own.
    for (const sku of ['TENT-2P', 'abc-1', 'OLD.STOVE_1']) expect(await get(url, lookup(sku))).to.equal(200);
    redisPath.delay(150);
    const deliveredBefore = redisPath.delivered();
    // What Redis had delivered when the read left the instance, noted as the proxy passes the read on.
    const seen: { deliveredAtRead?: number } = {};
    database.onSent((chunk) => {
      if (seen.deliveredAtRead === undefined && chunk.toString('latin1').includes('ABC-1')) seen.deliveredAtRead = redisPath.delivered();
    });
    expect(await get(url, lookup('ABC-1'))).to.equal(200);
    expect(seen.deliveredAtRead, 'bytes from Redis when the read was sent').to.equal(deliveredBefore);
    expect(redisPath.delivered()).to.be.above(deliveredBefore);
  });

  it('sends no read for a key this instance saw past its limit', async function () {
    const { url, database } = await startInstance({ RATE_LIMIT_PER_MINUTE: '3' });
    // Until Redis refuses the key: a count Redis is slow to answer is made on this instance's share
    // instead, so the third request is not always the last one let through.
    const statuses: number[] = [];
    for (let i = 0; i < 10 && !statuses.includes(429); i += 1) statuses.push(await get(url, lookup(`BEFORE-${i}`)));
    expect(statuses.slice(0, 3)).to.deep.equal([404, 404, 404]);
    expect(statuses).to.include(429);
    const sentBefore = sentToDatabase(database).length;
    for (let i = 0; i < 3; i += 1) expect(await get(url, lookup(`PAST-${i}`))).to.equal(429);
    // No lookup of them reached the database (its SKU would be sent); version reads after a late count may.
    expect(sentToDatabase(database).slice(sentBefore), 'sent to the database past the limit').not.to.include('PAST-');
  });

  it('sends no read for a key another instance pushed past its limit, however many of its lookups come at once', async function () {
    const { url, database } = await startInstance({ RATE_LIMIT_PER_MINUTE: '3', MAX_CONNECTIONS_PER_ADDRESS: '1000' });
    // The partner's catalog token, as this instance's counts saw it, and the lookup's statement
    // prepared: through the partner's other key, so this instance never counts the key refused below.
    for (const sku of ['TENT-2P', 'abc-1', 'OLD.STOVE_1']) expect(await get(url, lookup(sku), KEYS.acmeSecond)).to.equal(200);
    // Another instance, on the same Redis, uses up the key's window.
    const elsewhere = createRedisRateLimiter({ target: redisAt(redis!.url), limit: 3 });
    try {
      await elsewhere.ready();
      const allowed: boolean[] = [];
      for (let i = 0; i < 4; i += 1) allowed.push((await elsewhere.consume('acme-prod', 'acme')).allowed);
      expect(allowed).to.deep.equal([true, true, true, false]);
    } finally {
      await elsewhere.close();
    }
    const [sentBefore, statementsBefore] = [sentToDatabase(database).length, statementsRun(database)];
    // Lookups of SKUs no answer is held for, 60 at a time.
    const statuses: number[] = [];
    for (let round = 0; round < 8; round += 1) {
      statuses.push(...await Promise.all(Array.from({ length: 60 }, (_, i) => get(url, lookup(`ELSEWHERE-${round}-${i}`)))));
    }
    expect(new Set(statuses)).to.deep.equal(new Set([429]));
    // No lookup of them reached the database: a read sends its SKUs, as the prepared statement's values.
    // (A count Redis answers late, on a loaded machine, makes the instance read the key set's and the
    // catalog's versions from the database instead: those are no lookup's, and may come.)
    const sent = sentToDatabase(database).slice(sentBefore);
    expect(sent, `sent to the database for ${statuses.length} refused lookups (${statementsRun(database) - statementsBefore} statements)`).not.to.include('ELSEWHERE-');
  });
});
