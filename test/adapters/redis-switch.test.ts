import { expect } from 'chai';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { RedisChangeVersions } from '../../src/adapters/redis/redis-change-versions.js';
import { RedisRateLimiter } from '../../src/adapters/redis/redis-rate-limiter.js';
import { RedisRequestRoundTrip } from '../../src/adapters/redis/request-round-trip.js';
import { catalogVersionKey, DEFAULT_VERSION_PREFIX } from '../../src/adapters/redis/version-keys.js';
import { ChangesElsewhere } from '../../src/application/instances/changes-elsewhere.js';
import { capturedLogger } from '../support/captured-logger.js';
import { requireRedis, startRedisServer, type RedisServerProcess } from '../support/redis.js';
import { redisAt } from '../../src/adapters/redis/redis-target.js';

/** Polls a state (never a fixed wait for an event): a redis-server's replication, a probe's count. */
async function until(what: string, holds: () => Promise<boolean> | boolean): Promise<void> {
  for (let tries = 0; tries < 2_000; tries += 1) {
    if (await holds()) return;
    await sleep(10);
  }
  throw new Error(`never came: ${what}`);
}

const ACME_TOKEN = catalogVersionKey(DEFAULT_VERSION_PREFIX, 'acme');
const portOf = (url: string): number => Number(new URL(url).port);

/** Makes `server` a replica of `of` and waits until it holds its data (its link up). */
async function replicate(server: Redis, of: RedisServerProcess): Promise<void> {
  await server.call('REPLICAOF', '127.0.0.1', String(portOf(of.url)));
  await until('the replica\'s link up', async () => /master_link_status:up/.test(await server.info('replication')));
}

/** What a redis-server says of a command's calls (INFOs commandstats): calls, failed and rejected. */
async function commandStats(server: Redis, command: string): Promise<{ calls: number; failed: number }> {
  const line = (await server.info('commandstats')).split('\n').find((l) => l.startsWith(`cmdstat_${command}:`)) ?? '';
  const figure = (name: string): number => Number(new RegExp(`${name}=(\\d+)`).exec(line)?.[1] ?? 0);
  return { calls: figure('calls'), failed: figure('failed_calls') + figure('rejected_calls') };
}

describe('Redis rate limiter across a switch of Redis (a failover, a Redis restarted without its data)', function () {
  this.timeout(30_000);
  const servers: RedisServerProcess[] = [];
  const closing: (() => Promise<unknown>)[] = [];

  before(async function () {
    await requireRedis(this);
  });

  afterEach(async function () {
    for (const close of closing.splice(0).reverse()) await close();
    for (const server of servers.splice(0)) await server.kill();
  });

  const server = async (): Promise<{ process: RedisServerProcess; client: Redis }> => {
    // Replicas sync at once (diskless, no delay), not 5 s after they ask.
    const process = await startRedisServer(undefined, ['--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0']);
    servers.push(process);
    const client = new Redis(process.url);
    closing.push(() => client.quit());
    return { process, client };
  };

  it('forgets every token and key it holds before handing out the first count of a Redis that lost the last announcement', async function () {
    // The primary the instance counts on, and a replica that stops following it before an announcement.
    const primary = await server();
    const replica = await server();
    await replicate(replica.client, primary.process);
    const watch = new ChangesElsewhere();
    const { logger, lines } = capturedLogger();
    const roundTrip = new RedisRequestRoundTrip({ target: redisAt(primary.process.url), watch, coolDownMs: 50, logger });
    const limiter = new RedisRateLimiter(roundTrip, { limit: 100 }, true);
    closing.push(() => limiter.close());
    await roundTrip.ready();
    await limiter.consume('key-a', 'acme');
    const before = { token: watch.catalogToken('acme'), epoch: watch.epoch };
    expect(before.token).to.be.a('string');
    // The replica has the token the instance saw; it stops following before the import's announcement.
    await until('the replica holds the token', async () => (await replica.client.get(ACME_TOKEN)) === before.token);
    await replica.client.call('REPLICAOF', 'NO', 'ONE');
    const versions = new RedisChangeVersions({ target: redisAt(primary.process.url) });
    closing.push(() => versions.close());
    await versions.catalogsChanged(['acme']);
    await versions.keysChanged();

    // The failover, as the instance meets it: the same address and connection, the promoted replica's
    // data behind it (without the announcement), under a replication id of its own.
    await replicate(primary.client, replica.process);
    await primary.client.call('REPLICAOF', 'NO', 'ONE');
    expect(await primary.client.get(ACME_TOKEN), 'the announcement is lost').to.equal(before.token);

    let epochWhenCounted: number | undefined;
    await limiter.consume('key-a', 'acme').then(() => {
      epochWhenCounted = watch.epoch;
    });
    expect(epochWhenCounted, 'everything held forgotten before the count was handed out').to.not.equal(before.epoch);
    expect(lines.filter((line) => /Redis switched/.test(String(line.msg)))).to.have.length(1);
    // Once taken in, the same Redis is the same Redis: nothing more is forgotten.
    await limiter.consume('key-a', 'acme');
    expect(watch.epoch).to.equal(epochWhenCounted);
  });

  it('takes a Redis that restarted without its data, behind the same address, as a switch too', async function () {
    const first = await server();
    const watch = new ChangesElsewhere();
    const { logger, lines } = capturedLogger();
    const roundTrip = new RedisRequestRoundTrip({ target: redisAt(first.process.url), watch, coolDownMs: 50, logger });
    const limiter = new RedisRateLimiter(roundTrip, { limit: 100 }, true);
    closing.push(() => limiter.close());
    await roundTrip.ready();
    await limiter.consume('key-a', 'acme');
    const epoch = watch.epoch;
    // FLUSHALL and a new replication id, on the same connection: what a restart without data leaves.
    await first.client.flushall();
    await first.client.call('REPLICAOF', '127.0.0.1', '1');
    await first.client.call('REPLICAOF', 'NO', 'ONE');
    await limiter.consume('key-a', 'acme');
    expect(watch.epoch).to.not.equal(epoch);
    expect(lines.filter((line) => /Redis switched/.test(String(line.msg)))).to.have.length(1);
  });

  it('counts on its share against a replica that answers READONLY, probing by a count, without ever saying Redis is back until it counts', async function () {
    const primary = await server();
    const replica = await server();
    await replicate(replica.client, primary.process);
    const { logger, lines } = capturedLogger();
    const watch = new ChangesElsewhere();
    const roundTrip = new RedisRequestRoundTrip({ target: redisAt(replica.process.url), watch, coolDownMs: 20, logger });
    const limiter = new RedisRateLimiter(roundTrip, { limit: 100 }, true);
    closing.push(() => limiter.close());
    await roundTrip.ready();
    const statuses = [];
    for (let i = 0; i < 5; i += 1) statuses.push(await limiter.consume('key-a', 'acme'));
    expect(statuses.every((status) => status.allowed)).to.equal(true);
    expect(limiter.usingFallback()).to.equal(true);
    // Requests keep coming while the replica refuses: each cool-down ends in one probe, a count, refused.
    const refusedBefore = (await commandStats(replica.client, 'evalsha')).failed;
    await until('ten probes refused', async () => {
      await limiter.consume('key-a', 'acme');
      return (await commandStats(replica.client, 'evalsha')).failed >= refusedBefore + 10;
    });
    const said = (pattern: RegExp): number => lines.filter((line) => pattern.test(String(line.msg))).length;
    expect(said(/Redis unavailable/), 'the loss said once').to.equal(1);
    expect(said(/Redis is back/), 'never back while it refuses to count').to.equal(0);
    expect(lines.find((line) => /Redis unavailable/.test(String(line.msg)))?.fix).to.match(/^Redis is a replica: point REDIS_URL at the primary/);
    expect(limiter.usingFallback()).to.equal(true);

    // Promoted: the next probe counts, and the instance is back, once.
    await replica.client.call('REPLICAOF', 'NO', 'ONE');
    await until('back in Redis', async () => {
      await limiter.consume('key-a', 'acme');
      return !limiter.usingFallback();
    });
    expect(said(/Redis is back/)).to.equal(1);
  });
});
