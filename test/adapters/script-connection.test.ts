import { expect } from 'chai';
import { Socket } from 'node:net';
import { Redis } from 'ioredis';
import { parseReply, ScriptConnection, SlowReplyError } from '../../src/adapters/redis/script-connection.js';
import { freePort, requireRedis, startRedisServer, TEST_REDIS_URL, type RedisServerProcess } from '../support/redis.js';

/** Echoes its keys and arguments back, with a count and a nil, as the rate-limit script's reply shape does. */
const ECHO = "return {#KEYS, tonumber(ARGV[1]), KEYS[1], ARGV[2], redis.call('GET', KEYS[1])}";

describe('the lean Redis script connection', function () {
  describe('its RESP parser', function () {
    const reply = Buffer.from('*5\r\n:42\r\n:-7\r\n$4\r\ntök\r\n$-1\r\n*2\r\n+OK\r\n-ERR no\r\n', 'utf8');

    it('reads integers, negative ones, bulk strings in UTF-8, nil, simple strings, errors and nested arrays', function () {
      const parsed = parseReply(reply, 0);
      expect(parsed?.next).to.equal(reply.length);
      const [answer, negative, text, nil, nested] = parsed!.reply as unknown[];
      expect([answer, negative, text, nil]).to.deep.equal([42, -7, 'tök', null]);
      const [ok, error] = nested as [string, Error];
      expect(ok).to.equal('OK');
      expect(error).to.be.instanceOf(Error);
      expect(error.message).to.equal('ERR no');
    });

    it('waits for more at every point a reply can be cut, and starts where it is told', function () {
      for (let cut = 0; cut < reply.length; cut += 1) expect(parseReply(reply.subarray(0, cut), 0), `cut at ${cut}`).to.equal(undefined);
      const two = Buffer.concat([Buffer.from(':1\r\n'), reply]);
      expect(parseReply(two, 0)).to.deep.equal({ reply: 1, next: 4 });
      expect(parseReply(two, 4)?.next).to.equal(two.length);
    });

    it('refuses what is not RESP', function () {
      expect(() => parseReply(Buffer.from('?1\r\n'), 0)).to.throw(/unexpected reply type/);
      expect(() => parseReply(Buffer.from(':1x\r\n'), 0)).to.throw(/unexpected integer/);
    });
  });

  describe('on the machine\'s Redis', function () {
    before(async function () {
      await requireRedis(this);
    });

    it('answers each of 2,000 concurrent calls with its own reply, in UTF-8 both ways', async function () {
      const connection = new ScriptConnection({ url: TEST_REDIS_URL, script: ECHO, timeoutMs: 2_000 });
      try {
        const replies = await Promise.all(Array.from({ length: 2_000 }, (_, i) => connection.run([`pcat:test:lean:é${i}`, 'x'], [String(i), `ärg ${i}`])));
        replies.forEach((reply, i) => expect(reply).to.deep.equal([2, i, `pcat:test:lean:é${i}`, `ärg ${i}`, null]));
      } finally {
        connection.close();
      }
      // A closed connection refuses at once.
      let refused: unknown;
      await connection.run(['k'], ['1', 'a']).catch((error: unknown) => { refused = error; });
      expect(refused).to.be.instanceOf(Error);
    });
  });

  describe('writing its calls', function () {
    before(async function () {
      await requireRedis(this);
    });

    /** The EVALSHA writes the process makes on its sockets while `run` runs, and their calls. */
    async function writesOf(run: () => Promise<unknown>): Promise<number[]> {
      const writes: number[] = [];
      // The sockets still write: this only counts what they are given.
      const write = Reflect.get(Socket.prototype, 'write') as (this: Socket, ...args: unknown[]) => boolean;
      // An own property of Socket.prototype, in front of the inherited method, removed afterwards.
      Object.defineProperty(Socket.prototype, 'write', {
        configurable: true,
        writable: true,
        value(this: Socket, chunk: unknown, ...rest: unknown[]): boolean {
          if (typeof chunk === 'string' && chunk.includes('EVALSHA')) writes.push(chunk.split('EVALSHA').length - 1);
          return write.call(this, chunk, ...rest);
        },
      });
      try {
        await run();
      } finally {
        Reflect.deleteProperty(Socket.prototype, 'write');
      }
      return writes;
    }

    it('sends the calls one callback makes in one write, at the callback\'s end, and each callback\'s in its own', async function () {
      const connection = new ScriptConnection({ url: TEST_REDIS_URL, script: ECHO, timeoutMs: 2_000 });
      try {
        await connection.run(['pcat:test:lean:first'], ['0', 'a']);
        const together = await writesOf(() => Promise.all(Array.from({ length: 20 }, (_, i) => connection.run([`pcat:test:lean:${i}`], [String(i), 'a']))));
        expect(together).to.deep.equal([20]);
        // Three callbacks of one loop turn: none waits for the others (the round trip gathers a turn's counts itself).
        const apart = await writesOf(() => Promise.all(Array.from({ length: 3 }, (_, i) => new Promise((resolve, reject) => {
          setImmediate(() => {
            connection.run([`pcat:test:lean:${i}`], [String(i), 'a']).then(resolve, reject);
          });
        }))));
        expect(apart).to.deep.equal([1, 1, 1]);
      } finally {
        connection.close();
      }
    });
  });

  describe('on a redis-server of its own', function () {
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

    it('runs the script again after Redis forgot it (SCRIPT FLUSH)', async function () {
      server = await startRedisServer();
      const connection = new ScriptConnection({ url: server.url, script: ECHO, timeoutMs: 2_000 });
      try {
        expect(await connection.run(['a'], ['1', 'x'])).to.deep.equal([1, 1, 'a', 'x', null]);
        const admin = new Redis(server.url);
        await admin.script('FLUSH');
        await admin.quit();
        expect(await connection.run(['a'], ['2', 'y'])).to.deep.equal([1, 2, 'a', 'y', null]);
      } finally {
        connection.close();
      }
    });

    it('signs in with the password and database of its URL, and fails without saying the password', async function () {
      const port = await freePort();
      server = await startRedisServer(port, ['--requirepass', 's3cret-pass']);
      const admin = new Redis(`redis://:s3cret-pass@127.0.0.1:${port}/3`);
      await admin.set('pcat:test:lean:db3', 'in three');
      await admin.quit();
      const good = new ScriptConnection({ url: `redis://:s3cret-pass@127.0.0.1:${port}/3`, script: ECHO, timeoutMs: 2_000 });
      const bad = new ScriptConnection({ url: `redis://:wrong-pass@127.0.0.1:${port}`, script: ECHO, timeoutMs: 2_000 });
      try {
        expect(await good.run(['pcat:test:lean:db3'], ['1', 'x'])).to.deep.equal([1, 1, 'pcat:test:lean:db3', 'x', 'in three']);
        let failure: Error | undefined;
        await bad.run(['a'], ['1', 'x']).catch((error: unknown) => { failure = error as Error; });
        expect(failure?.message).to.match(/WRONGPASS|invalid password/);
        expect(failure?.message).to.not.include('wrong-pass');
      } finally {
        good.close();
        bad.close();
      }
    });

    it('drops the connection and rejects every waiting call once Redis has answered nothing for lostAfterMs, and reconnects on the next call', async function () {
      server = await startRedisServer();
      const connection = new ScriptConnection({ url: server.url, script: ECHO, timeoutMs: 5_000, lostAfterMs: 300 });
      try {
        expect(await connection.run(['a'], ['1', 'x'])).to.have.length(5);
        server.pause();
        const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => connection.run(['a'], ['1', 'x'])));
        const reasons = outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error) : null));
        // Lost, not slow: nothing was answered for 300 ms.
        expect(reasons.every((r) => r !== null && !(r instanceof SlowReplyError) && /answered nothing for 300 ms/.test(r.message))).to.equal(true);
        server.resume();
        expect(await connection.run(['a'], ['2', 'y'])).to.deep.equal([1, 2, 'a', 'y', null]);
      } finally {
        connection.close();
      }
    });

    it('gives up a call not answered within the timeout as slow, keeping the connection, and gives each later call its own reply', async function () {
      server = await startRedisServer();
      const connection = new ScriptConnection({ url: server.url, script: ECHO, timeoutMs: 200, lostAfterMs: 5_000 });
      try {
        expect(await connection.run(['a'], ['1', 'x'])).to.have.length(5);
        server.pause();
        const late = Array.from({ length: 5 }, (_, i) => connection.run(['late'], [String(i), 'l']));
        const outcomes = await Promise.allSettled(late);
        expect(outcomes.every((o) => o.status === 'rejected' && o.reason instanceof SlowReplyError)).to.equal(true);
        expect((outcomes[0] as PromiseRejectedResult).reason).to.match(/did not answer within 200 ms/);
        server.resume();
        // The late replies arrive first and are dropped; each call after them gets its own.
        const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => connection.run([`k${i}`], [String(i), `a${i}`])));
        replies.forEach((reply, i) => expect(reply).to.deep.equal([1, i, `k${i}`, `a${i}`, null]));
      } finally {
        connection.close();
      }
    });

    it('takes a reply that waited unread while this process was busy, however long, and gives up nothing for it', async function () {
      server = await startRedisServer();
      const connection = new ScriptConnection({ url: server.url, script: ECHO, timeoutMs: 200, lostAfterMs: 600 });
      try {
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
      const connection = new ScriptConnection({ url: server.url, script: ECHO, timeoutMs: 1_000 });
      try {
        expect(await connection.run(['a'], ['1', 'x'])).to.have.length(5);
        await server.kill();
        let failure: unknown;
        await connection.run(['a'], ['1', 'x']).catch((error: unknown) => { failure = error; });
        expect(failure).to.be.instanceOf(Error);
        server = await startRedisServer(port);
        expect(await connection.run(['b'], ['3', 'z'])).to.deep.equal([1, 3, 'b', 'z', null]);
      } finally {
        connection.close();
      }
    });
  });
});
