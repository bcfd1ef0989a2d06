import { expect } from 'chai';
import { Redis } from 'ioredis';
import { redisAt } from '../../src/adapters/redis/redis-target.js';
import { scriptCalls, SlowReplyError, type CountCalls } from '../../src/adapters/redis/topology-calls.js';
import { freePort, requireRedis, startRedisServer, TEST_REDIS_URL, type RedisServerProcess } from '../support/redis.js';

/** Echoes its keys and arguments back, with a count and a nil, as the rate-limit script's reply shape does. */
const ECHO = "return {#KEYS, tonumber(ARGV[1]), KEYS[1], ARGV[2], redis.call('GET', KEYS[1])}";

function calls(url: string, timeoutMs: number, lostAfterMs = timeoutMs): CountCalls {
  return scriptCalls(redisAt(url), ECHO, { timeoutMs, lostAfterMs, maxReconnectDelayMs: 50 });
}

describe('the request path\'s script calls (topology-calls.ts), on one Redis', function () {
  this.timeout(20_000);
  let server: RedisServerProcess | undefined;
  before(async function () {
    await requireRedis(this);
  });
  afterEach(async function () {
    server?.resume();
    await server?.kill();
    server = undefined;
  });

  it('answers each of 2,000 concurrent calls with its own reply, in UTF-8 both ways, and refuses at once once closed', async function () {
    const connection = calls(TEST_REDIS_URL, 2_000);
    await connection.whenConnected();
    try {
      const replies = await Promise.all(Array.from({ length: 2_000 }, (_, i) => connection.run([`pcat:test:lean:é${i}`, 'x'], [String(i), `ärg ${i}`])));
      replies.forEach((reply, i) => expect(reply).to.deep.equal([2, i, `pcat:test:lean:é${i}`, `ärg ${i}`, null]));
    } finally {
      connection.close();
    }
    let refused: unknown;
    await connection.run(['k'], ['1', 'a']).catch((error: unknown) => { refused = error; });
    expect(refused).to.be.instanceOf(Error);
  });

  it('runs the script again after Redis forgot it (SCRIPT FLUSH)', async function () {
    server = await startRedisServer();
    const connection = calls(server.url, 2_000);
    try {
      await connection.whenConnected();
      expect(await connection.run(['a'], ['1', 'x'])).to.deep.equal([1, 1, 'a', 'x', null]);
      const admin = new Redis(server.url);
      await admin.script('FLUSH');
      await admin.quit();
      expect(await connection.run(['a'], ['2', 'y'])).to.deep.equal([1, 2, 'a', 'y', null]);
    } finally {
      connection.close();
    }
  });

  it('signs in with the password and database of its URL', async function () {
    const port = await freePort();
    server = await startRedisServer(port, ['--requirepass', 's3cret-pass']);
    const admin = new Redis(`redis://:s3cret-pass@127.0.0.1:${port}/3`);
    await admin.set('pcat:test:lean:db3', 'in three');
    await admin.quit();
    const good = calls(`redis://:s3cret-pass@127.0.0.1:${port}/3`, 2_000);
    try {
      await good.whenConnected();
      expect(await good.run(['pcat:test:lean:db3'], ['1', 'x'])).to.deep.equal([1, 1, 'pcat:test:lean:db3', 'x', 'in three']);
    } finally {
      good.close();
    }
  });

  it('rejects every waiting call as lost once Redis has answered nothing for lostAfterMs, and reconnects', async function () {
    server = await startRedisServer();
    const connection = calls(server.url, 100, 300);
    try {
      await connection.whenConnected();
      expect(await connection.run(['a'], ['1', 'x'])).to.have.length(5);
      server.pause();
      const outcomes = [];
      // Calls one after another, each given up as slow, until nothing has been heard for 300 ms.
      for (;;) {
        const outcome = await connection.run(['a'], ['1', 'x']).then(() => null, (error: unknown) => error as Error);
        outcomes.push(outcome);
        if (!(outcome instanceof SlowReplyError)) break;
      }
      expect(outcomes.at(-1)?.message).to.equal('Redis answered nothing for 300 ms');
      expect(outcomes.length).to.be.above(1);
      server.resume();
      await connection.whenConnected();
      expect(await connection.run(['a'], ['2', 'y'])).to.deep.equal([1, 2, 'a', 'y', null]);
    } finally {
      connection.close();
    }
  });

  it('gives up a call not answered within the timeout as slow, keeping the connection, and gives each later call its own reply', async function () {
    server = await startRedisServer();
    const connection = calls(server.url, 200, 60_000);
    try {
      await connection.whenConnected();
      expect(await connection.run(['a'], ['1', 'x'])).to.have.length(5);
      server.pause();
      const late = Array.from({ length: 5 }, (_, i) => connection.run(['late'], [String(i), 'l']));
      const outcomes = await Promise.allSettled(late);
      expect(outcomes.every((o) => o.status === 'rejected' && o.reason instanceof SlowReplyError)).to.equal(true);
      expect((outcomes[0] as PromiseRejectedResult).reason).to.match(/did not answer within 200 ms/);
      server.resume();
      const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => connection.run([`k${i}`], [String(i), `a${i}`])));
      replies.forEach((reply, i) => expect(reply).to.deep.equal([1, i, `k${i}`, `a${i}`, null]));
    } finally {
      connection.close();
    }
  });

  it('takes a reply that waited unread while this process was busy, however long, and gives up nothing for it', async function () {
    server = await startRedisServer();
    const connection = calls(server.url, 200, 600);
    try {
      await connection.whenConnected();
      expect(await connection.run(['a'], ['1', 'x'])).to.have.length(5);
      const pending = connection.run(['b'], ['2', 'y']);
      // The event loop held for 1.5 s, as a CPU-bound request or an overloaded host would hold it:
      // Redis answers at once, but nothing reads the reply until the loop is free again.
      const until = performance.now() + 1_500;
      while (performance.now() < until) { /* busy */ }
      expect(await pending).to.deep.equal([1, 2, 'b', 'y', null]);
    } finally {
      connection.close();
    }
  });

  it('rejects the calls in flight when Redis goes away, and uses a new Redis on the same port', async function () {
    const port = await freePort();
    server = await startRedisServer(port);
    const connection = calls(server.url, 1_000);
    try {
      await connection.whenConnected();
      expect(await connection.run(['a'], ['1', 'x'])).to.have.length(5);
      await server.kill();
      let failure: unknown;
      await connection.run(['a'], ['1', 'x']).catch((error: unknown) => { failure = error; });
      expect(failure).to.be.instanceOf(Error);
      server = await startRedisServer(port);
      await connection.whenConnected();
      expect(await connection.run(['b'], ['3', 'z'])).to.deep.equal([1, 3, 'b', 'z', null]);
    } finally {
      connection.close();
    }
  });
});
