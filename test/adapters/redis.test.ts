import { expect } from 'chai';
import { Redis } from 'ioredis';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import { RedisChangeVersions } from '../../src/adapters/redis/redis-change-versions.js';
import { RedisRateLimiter } from '../../src/adapters/redis/redis-rate-limiter.js';
import { createRedisRateLimiter } from '../support/redis-rate-limiter.js';
import { RedisRequestRoundTrip } from '../../src/adapters/redis/request-round-trip.js';
import { ChangesElsewhere } from '../../src/application/instances/changes-elsewhere.js';
import type { RateLimiter } from '../../src/application/access/rate-limiter.js';
import type { Clock } from '../../src/application/common/clock.js';
import { CachedProductCatalog } from '../../src/adapters/cache/cached-product-catalog.js';
import type { Sku } from '../../src/domain/sku.js';
import { changeVersionsContract } from '../contracts/change-versions.contract.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';
import { MemoryProductCatalog } from '../support/memory-product-catalog.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { rateLimiterContract } from '../contracts/rate-limiter.contract.js';
import { deleteKeys, freePort, requireRedis, startRedisServer, TEST_REDIS_URL, type RedisServerProcess } from '../support/redis.js';
import { redisAt } from '../../src/adapters/redis/redis-target.js';

const PREFIX = `pcat:rl:test:${process.pid}-${Date.now()}:`;


function capturedLogger(): { logger: Logger; lines: () => { level: number; msg: string }[] } {
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines: () => raw.map((l) => JSON.parse(l) as { level: number; msg: string }) };
}

const WARN = 40;
const INFO = 30;

async function consumeMany(limiter: RateLimiter, key: string, times: number): Promise<boolean[]> {
  const allowed: boolean[] = [];
  for (let i = 0; i < times; i += 1) allowed.push((await limiter.consume(key)).allowed);
  return allowed;
}

/** Polls until `check` holds, failing after `timeoutMs`; the deadline keeps the test bounded. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/**
 * The commands clients other than Lua sent Redis while `run` ran, each as its words, in the order
 * Redis ran them. Redis's own MONITOR tells them; an ECHO sent after `run` marks the end, since once
 * it shows every command before it has.
 */
async function commandsSentDuring(url: string, run: () => Promise<void>): Promise<string[][]> {
  const direct = new Redis(url);
  await direct.ping();
  const monitor = await direct.monitor();
  const commands: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source !== 'lua') commands.push(args);
  });
  try {
    await run();
    await direct.echo('the requests are done');
    await eventually(() => Promise.resolve(commands.some((args) => args[0]!.toLowerCase() === 'echo')));
    return commands.filter((args) => args[0]!.toLowerCase() !== 'echo');
  } finally {
    monitor.disconnect();
    await direct.quit();
  }
}

describe('Redis rate limiter on the machine\'s Redis', function () {
  const opened: RedisRateLimiter[] = [];
  let available = false;
  const open = async (options: { limit: number; windowMs?: number; clock?: Clock }): Promise<RedisRateLimiter> => {
    const limiter = createRedisRateLimiter({ target: redisAt(TEST_REDIS_URL), keyPrefix: PREFIX, ...options });
    opened.push(limiter);
    await limiter.ready();
    return limiter;
  };

  before(async function () {
    await requireRedis(this);
    available = true;
  });
  afterEach(function () {
    // Redis did the counting: no limiter left it.
    expect(opened.filter((l) => l.usingFallback())).to.deep.equal([]);
  });
  after(async function () {
    await Promise.all(opened.map((l) => l.close()));
    if (available) await deleteKeys(TEST_REDIS_URL, PREFIX);
  });

  rateLimiterContract('redis', async ({ limit, windowMs }) => {
    const limiter = await open({ limit, windowMs });
    return { limiter, close: () => Promise.resolve() };
  });

  it('keeps one expiring counter per key id under the prefix', async function () {
    const limiter = await open({ limit: 10, windowMs: 30_000 });
    await consumeMany(limiter, 'key-a', 2);
    const redis = new Redis(TEST_REDIS_URL);
    try {
      expect(await redis.get(`${PREFIX}key-a`)).to.equal('2');
      expect(await redis.pttl(`${PREFIX}key-a`)).to.be.within(1, 30_000);
    } finally {
      await redis.quit();
    }
  });

  it('gives a counter left without an expiry a fresh window rather than blocking the key for good', async function () {
    const redis = new Redis(TEST_REDIS_URL);
    try {
      await redis.set(`${PREFIX}stuck`, '50');
      const limiter = await open({ limit: 3, windowMs: 30_000 });
      const status = await limiter.consume('stuck');
      expect(status.allowed).to.equal(false);
      expect(status.resetSeconds).to.be.within(1, 30);
      expect(await redis.pttl(`${PREFIX}stuck`)).to.be.within(1, 30_000);
    } finally {
      await redis.quit();
    }
  });

  it('shares one count between two instances: 3 requests on A and 3 on B, the 6th is refused', async function () {
    const [a, b] = [await open({ limit: 5 }), await open({ limit: 5 })];
    expect(await consumeMany(a, 'shared', 3)).to.deep.equal([true, true, true]);
    expect(await consumeMany(b, 'shared', 3)).to.deep.equal([true, true, false]);
    expect(await a.consume('shared')).to.include({ allowed: false, remaining: 0 });
  });

  describe('leavesRoom: whether a lookup may read before its count', function () {
    it('is no for a key another instance pushed past its limit, on an instance that never counted it, and for a key no one counted', async function () {
      const [here, elsewhere] = [await open({ limit: 3 }), await open({ limit: 3 })];
      expect(await consumeMany(elsewhere, 'used-elsewhere', 4)).to.deep.equal([true, true, true, false]);
      expect(elsewhere.leavesRoom('used-elsewhere'), 'on the instance that saw it refused').to.equal(false);
      expect(here.leavesRoom('used-elsewhere'), 'on the instance that never counted it').to.equal(false);
      expect(here.leavesRoom('never-counted')).to.equal(false);
      // Counted here, it follows Redis's answer: refused, none left; a key with room left, yes.
      expect(await here.consume('used-elsewhere')).to.include({ allowed: false });
      expect(here.leavesRoom('used-elsewhere')).to.equal(false);
      expect(await here.consume('never-counted')).to.include({ allowed: true, remaining: 2 });
      expect(here.leavesRoom('never-counted')).to.equal(true);
    });

    it('is no while the key\'s counts in flight take all Redis last said was left, and follows the answer once they are answered', async function () {
      const limiter = await open({ limit: 5, windowMs: 30_000 });
      expect(await consumeMany(limiter, 'in-flight', 2)).to.deep.equal([true, true]);
      expect(limiter.leavesRoom('in-flight'), '3 left, none in flight').to.equal(true);
      // Its window ends in Redis (the counter gone, as its expiry takes it): this instance is not told,
      // and the counts below each take one of the 3 its last answer said were left.
      const redis = new Redis(TEST_REDIS_URL);
      try {
        await redis.del(`${PREFIX}in-flight`);
      } finally {
        await redis.quit();
      }
      const counts = [limiter.consume('in-flight'), limiter.consume('in-flight')];
      expect(limiter.leavesRoom('in-flight'), '3 left, 2 in flight').to.equal(true);
      counts.push(limiter.consume('in-flight'));
      expect(limiter.leavesRoom('in-flight'), '3 left, 3 in flight').to.equal(false);
      // Answered in a fresh window: 3 counted, 2 left and none in flight.
      expect((await Promise.all(counts)).map((status) => status.remaining)).to.deep.equal([4, 3, 2]);
      expect(limiter.leavesRoom('in-flight'), '2 left, none in flight').to.equal(true);
      const more = [limiter.consume('in-flight'), limiter.consume('in-flight')];
      expect(limiter.leavesRoom('in-flight'), '2 left, 2 in flight').to.equal(false);
      expect((await Promise.all(more)).map((status) => status.remaining)).to.deep.equal([1, 0]);
      expect(limiter.leavesRoom('in-flight'), 'none left').to.equal(false);
    });

    it('is no once the window Redis gave for the key has ended, until a count in the next one is answered', async function () {
      let now = Date.now();
      const limiter = await open({ limit: 5, windowMs: 30_000, clock: { now: () => now } });
      expect((await limiter.consume('ends')).allowed).to.equal(true);
      expect(limiter.leavesRoom('ends')).to.equal(true);
      // Past the end Redis gave, this instance no longer knows what the key has left.
      now += 30_000;
      expect(limiter.leavesRoom('ends')).to.equal(false);
      expect((await limiter.consume('ends')).allowed).to.equal(true);
      expect(limiter.leavesRoom('ends')).to.equal(true);
    });
  });
});

describe('Version tokens on the machine\'s Redis', function () {
  let serial = 0;
  const freshVersionPrefix = (): string => `pcat:{v}:test:${process.pid}-${Date.now()}-${(serial += 1)}:`;
  const prefixes: string[] = [];
  const closing: (() => Promise<void>)[] = [];

  before(async function () {
    await requireRedis(this);
  });
  after(async function () {
    await Promise.all(closing.splice(0).map((close) => close()));
    for (const prefix of prefixes.splice(0)) await deleteKeys(TEST_REDIS_URL, prefix);
  });

  changeVersionsContract('redis', () => {
    const versionPrefix = freshVersionPrefix();
    const versions = new RedisChangeVersions({ target: redisAt(TEST_REDIS_URL), versionPrefix });
    return Promise.resolve({
      versions,
      close: async () => {
        await versions.close();
        await deleteKeys(TEST_REDIS_URL, versionPrefix);
      },
    });
  });

  it('shows the watch a change announced through RedisChangeVersions in the very next request\'s round trip, the one that counts it', async function () {
    const versionPrefix = freshVersionPrefix();
    prefixes.push(versionPrefix, `${PREFIX}watch:`);
    const versions = new RedisChangeVersions({ target: redisAt(TEST_REDIS_URL), versionPrefix });
    closing.push(() => versions.close());
    const watch = new ChangesElsewhere();
    const roundTrip = new RedisRequestRoundTrip({ target: redisAt(TEST_REDIS_URL), instancesKey: `${PREFIX}watch:~instances`, versionPrefix, watch });
    closing.push(() => roundTrip.close());
    const limiter = new RedisRateLimiter(roundTrip, { limit: 100, keyPrefix: `${PREFIX}watch:` });
    await roundTrip.ready();

    await limiter.consume('key-a', 'acme');
    await limiter.consume('key-b', 'globex');
    const [acme, globex] = [watch.catalogToken('acme'), watch.catalogToken('globex')];
    expect(acme).to.equal(await versions.catalogVersion('acme'));
    expect(globex).to.equal(await versions.catalogVersion('globex'));
    const seq = watch.keysSeq;
    await limiter.consume('key-a', 'acme');
    expect(watch.keysSeq, 'no change announced').to.equal(seq);

    await versions.keysChanged();
    await versions.catalogsChanged(['acme']);
    await limiter.consume('key-a', 'acme');
    expect(watch.keysSeq).to.equal(seq + 1);
    expect(watch.catalogToken('acme')).to.not.equal(acme);
    expect(watch.catalogToken('acme')).to.equal(await versions.catalogVersion('acme'));
    expect(watch.catalogToken('globex')).to.equal(globex);
    await limiter.consume('key-b', 'globex');
    expect(watch.keysSeq, 'the key-set change is counted once').to.equal(seq + 1);
    expect(watch.catalogToken('globex')).to.equal(globex);
  });
});

describe('Redis rate limiter when Redis is lost', function () {
  it('answers every request on its own when Redis cannot be reached, warning once', async function () {
    const { logger, lines } = capturedLogger();
    const limiter = createRedisRateLimiter({
      target: redisAt(`redis://127.0.0.1:${await freePort()}`),
      limit: 3,
      logger,
      coolDownMs: 50,
    });
    try {
      const statuses = [];
      for (let i = 0; i < 200; i += 1) statuses.push(await limiter.consume('key-a'));
      expect(statuses.slice(0, 4).map((s) => [s.allowed, s.remaining])).to.deep.equal([[true, 2], [true, 1], [true, 0], [false, 0]]);
      expect(statuses.every((s) => s.limit === 3)).to.equal(true);
      await sleep(300);
      expect((await limiter.consume('key-b')).allowed).to.equal(true);
      const warnings = lines().filter((l) => l.level === WARN);
      expect(warnings).to.have.length(1);
      expect(warnings[0]!.msg).to.match(/Redis unavailable/);
    } finally {
      await limiter.close();
    }
  });

  describe('on a redis-server of its own, stopped and started', function () {
    let server: RedisServerProcess | undefined;
    let port = 0;
    const opened: RedisRateLimiter[] = [];

    before(async function () {
      await requireRedis(this);
      port = await freePort();
    });
    beforeEach(async function () {
      server = await startRedisServer(port);
    });
    afterEach(async function () {
      await Promise.all(opened.splice(0).map((l) => l.close()));
      server?.resume();
      await server?.kill();
    });

    const open = async (logger?: Logger): Promise<RedisRateLimiter> => {
      const limiter = createRedisRateLimiter({
        target: redisAt(`redis://127.0.0.1:${port}`),
        limit: 5,
        coolDownMs: 200,
        ...(logger === undefined ? {} : { logger }),
      });
      opened.push(limiter);
      await limiter.ready();
      return limiter;
    };
    /** A request's round trip that tells the watch what it reads, and the limiter counting through it. */
    const openWatching = async (watch: ChangesElsewhere): Promise<{ roundTrip: RedisRequestRoundTrip; limiter: RedisRateLimiter }> => {
      const roundTrip = new RedisRequestRoundTrip({ target: redisAt(`redis://127.0.0.1:${port}`), coolDownMs: 200, watch });
      const limiter = new RedisRateLimiter(roundTrip, { limit: 1_000 }, true);
      opened.push(limiter);
      await roundTrip.ready();
      return { roundTrip, limiter };
    };

    it('makes each request one command on Redis: the EVALSHA that counts it and reads the version tokens', async function () {
      const watch = new ChangesElsewhere();
      const { limiter } = await openWatching(watch);
      // The first count loads the script (EVALSHA, then EVAL once).
      await limiter.consume('key-a', 'acme');
      const sent = await commandsSentDuring(server!.url, async () => {
        for (let i = 0; i < 20; i += 1) await limiter.consume(`key-${i % 3}`, i % 2 === 0 ? 'acme' : 'globex');
      });
      expect(sent.map((args) => args[0]!.toLowerCase())).to.deep.equal(Array<string>(20).fill('evalsha'));
      expect(watch.catalogToken('globex'), 'the tokens were read in it').to.be.a('string');
    });

    it('counts the requests of one loop turn in one script call, each request its own count, reading each partner\'s token once', async function () {
      const watch = new ChangesElsewhere();
      const { limiter } = await openWatching(watch);
      await limiter.consume('warm', 'acme');
      let statuses: { key: string; remaining: number }[] = [];
      const sent = await commandsSentDuring(server!.url, async () => {
        // Twenty callbacks of one turn, as the requests a turn reads from twenty sockets: 7, 7 and 6 on three keys, two partners.
        statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => new Promise<{ key: string; remaining: number }>((resolve, reject) => {
          setImmediate(() => {
            limiter.consume(`turn-${i % 3}`, i % 2 === 0 ? 'acme' : 'globex').then((status) => resolve({ key: `turn-${i % 3}`, remaining: status.remaining }), reject);
          });
        })));
      });
      // All 20 at the turn's end, Redis idle or not, in one call with the instances, the key-set token, 20 counters
      // and the two partners' catalog tokens.
      expect(sent.map((args) => `${args[0]!.toLowerCase()} ${args[2]!}`)).to.deep.equal([`evalsha ${1 + 1 + 20 + 2}`]);
      for (const key of ['turn-0', 'turn-1', 'turn-2']) {
        const remaining = statuses.filter((status) => status.key === key).map((status) => status.remaining).sort((a, b) => b - a);
        expect(remaining, key).to.deep.equal(Array.from({ length: key === 'turn-2' ? 6 : 7 }, (_, i) => 999 - i));
      }
      expect(watch.catalogToken('acme')).to.be.a('string');
      expect(watch.catalogToken('globex')).to.be.a('string').and.not.equal(watch.catalogToken('acme'));
    });

    it('sends a turn of 300 counts as 32 at once, then calls of at most 128 at the turn\'s end, each request still counted once', async function () {
      const { limiter } = await openWatching(new ChangesElsewhere());
      await limiter.consume('warm', 'acme');
      let statuses: { remaining: number }[] = [];
      const sent = await commandsSentDuring(server!.url, async () => {
        statuses = await Promise.all(Array.from({ length: 300 }, () => limiter.consume('many', 'acme')));
      });
      // Each call: the instances, the key-set token, its counters and the one partner's token.
      expect(sent.map((args) => `${args[0]!.toLowerCase()} ${Number(args[2]) - 3}`)).to.deep.equal(['evalsha 32', 'evalsha 128', 'evalsha 128', 'evalsha 12']);
      expect(statuses.map((status) => status.remaining).sort((a, b) => b - a)).to.deep.equal(Array.from({ length: 300 }, (_, i) => 999 - i));
      const direct = new Redis(server!.url);
      try {
        expect(await direct.get('pcat:rl:many')).to.equal('300');
      } finally {
        await direct.quit();
      }
    });

    it('sends a turn\'s first 32 counts at once only when no call waits and no reply came in the turn', async function () {
      const { limiter } = await openWatching(new ChangesElsewhere());
      await limiter.consume('warm', 'acme');
      const forty = async (): Promise<void> => {
        await Promise.all(Array.from({ length: 40 }, () => limiter.consume('forty', 'acme')));
      };
      const calls = (sent: string[][]): string[] => sent.map((args) => `${args[0]!.toLowerCase()} ${Number(args[2]) - 3}`);
      // Nothing else to do: the first 32 go before the turn ends, the other 8 at its end.
      expect(calls(await commandsSentDuring(server!.url, forty))).to.deep.equal(['evalsha 32', 'evalsha 8']);
      // A call still waiting (sent at the end of the turn before): the 40 wait for their own turn's end.
      expect(calls(await commandsSentDuring(server!.url, async () => {
        const waiting = limiter.consume('first', 'acme');
        await new Promise<void>((resolve) => {
          setImmediate(() => {
            void forty().then(resolve);
          });
        });
        await waiting;
      }))).to.deep.equal(['evalsha 1', 'evalsha 40']);
      // A reply handed out in this turn: its answers are the turn's work, and the 40 wait for its end.
      expect(calls(await commandsSentDuring(server!.url, async () => {
        await limiter.consume('first', 'acme').then(forty);
      }))).to.deep.equal(['evalsha 1', 'evalsha 40']);
    });

    it('hands out tokens after a FLUSHALL unlike any before, through RedisChangeVersions and to the watch through the round trip', async function () {
      const watch = new ChangesElsewhere();
      const { roundTrip, limiter } = await openWatching(watch);
      const versions = new RedisChangeVersions({ target: redisAt(server!.url) });
      const direct = new Redis(server!.url);
      // Every token read before a flush; a token read after one must be none of them.
      const beforeFlush = new Set<string>();
      let sinceFlush: string[] = [];
      const expectNew = (token: string | null | undefined, what: string): void => {
        expect(token, what).to.be.a('string');
        expect(beforeFlush.has(token!), `${what} came back from before a flush: ${token}`).to.equal(false);
        sinceFlush.push(token!);
      };
      const flush = async (): Promise<void> => {
        for (const token of sinceFlush) beforeFlush.add(token);
        sinceFlush = [];
        await direct.flushall();
      };
      try {
        expectNew(await versions.keysVersion(), 'first key-set token');
        expectNew(await versions.catalogVersion('acme'), 'first catalog token');
        await versions.keysChanged();
        await versions.catalogsChanged(['acme']);
        expectNew(await versions.keysVersion(), 'changed key-set token');
        expectNew(await versions.catalogVersion('acme'), 'changed catalog token');
        await limiter.consume('key-a', 'acme');
        expect(watch.catalogToken('acme')).to.equal(await versions.catalogVersion('acme'));
        expectNew(watch.catalogToken('acme'), 'catalog token seen by the limiter');
        expectNew(await roundTrip.keySetVersions.keysVersion(), 'key-set token seen by the limiter');

        // After a flush the limiter reads first: it starts the new tokens, and the operator reads the same.
        await flush();
        let seq = watch.keysSeq;
        await limiter.consume('key-a', 'acme');
        expect(watch.keysSeq).to.equal(seq + 1);
        expectNew(watch.catalogToken('acme'), 'catalog token seen by the limiter after the first flush');
        expect(await versions.catalogVersion('acme')).to.equal(watch.catalogToken('acme'));
        const keysAfterFirst = await roundTrip.keySetVersions.keysVersion();
        expectNew(keysAfterFirst, 'key-set token seen by the limiter after the first flush');
        expect(await versions.keysVersion()).to.equal(keysAfterFirst);

        // After another the operator reads first, and the limiter is shown what it started.
        await flush();
        const keysAfterSecond = await versions.keysVersion();
        const catalogAfterSecond = await versions.catalogVersion('acme');
        expectNew(keysAfterSecond, 'key-set token read through RedisChangeVersions after the second flush');
        expectNew(catalogAfterSecond, 'catalog token read through RedisChangeVersions after the second flush');
        seq = watch.keysSeq;
        await limiter.consume('key-a', 'acme');
        expect(watch.keysSeq).to.equal(seq + 1);
        expect(watch.catalogToken('acme')).to.equal(catalogAfterSecond);
        expect(await roundTrip.keySetVersions.keysVersion()).to.equal(keysAfterSecond);
      } finally {
        await direct.quit();
        await versions.close();
      }
    });

    it('tells the key set, through the round trip, the key changes announced since its mark, and nothing once a flush lost them', async function () {
      const watch = new ChangesElsewhere();
      const { roundTrip, limiter } = await openWatching(watch);
      const versions = new RedisChangeVersions({ target: redisAt(server!.url) });
      const direct = new Redis(server!.url);
      try {
        await versions.keysChanged({ withdrawn: ['acme-before'], added: ['acme-before-new'] });
        const mark = await roundTrip.keySetVersions.keyChangesMark();
        expect(mark).to.be.a('number');
        expect(await roundTrip.keySetVersions.keyChangesSince(mark!)).to.deep.equal({ withdrawn: new Set(), added: new Set() });
        await versions.keysChanged({ withdrawn: ['acme-prod'], added: [] });
        await versions.keysChanged({ withdrawn: ['acme-staging'], added: ['acme-new'] });
        expect(await roundTrip.keySetVersions.keyChangesSince(mark!)).to.deep.equal({ withdrawn: new Set(['acme-prod', 'acme-staging']), added: new Set(['acme-new']) });
        // The token is replaced with every announcement, so the watch learns of each.
        const seq = watch.keysSeq;
        await versions.keysChanged({ withdrawn: ['globex-prod'], added: [] });
        await limiter.consume('key-a', 'acme');
        expect(watch.keysSeq).to.equal(seq + 1);
        // An announcement that says nothing of what changed leaves nothing decidable.
        await versions.keysChanged();
        expect(await roundTrip.keySetVersions.keyChangesSince(mark!)).to.equal(null);
        const later = await roundTrip.keySetVersions.keyChangesMark();
        expect(await roundTrip.keySetVersions.keyChangesSince(later!)).to.deep.equal({ withdrawn: new Set(), added: new Set() });
        // What was announced before a flush is gone: a mark from before it cannot be told anything.
        await direct.flushall();
        await versions.keysChanged({ withdrawn: ['acme-new'], added: [] });
        expect(await roundTrip.keySetVersions.keyChangesSince(later!)).to.equal(null);
        expect(await direct.pttl('pcat:{v}:keychanges')).to.be.above(6 * 24 * 3_600_000);
      } finally {
        await direct.quit();
        await versions.close();
      }
    });

    it('stops trusting the watch while Redis is gone, keeping the answers held, and trusts it again once Redis is back', async function () {
      const watch = new ChangesElsewhere();
      const { limiter } = await openWatching(watch);
      await limiter.consume('key-a', 'acme');
      const before = watch.catalogToken('acme');
      expect(before).to.be.a('string');
      expect(watch.isShared()).to.equal(true);
      const epochBefore = watch.epoch;

      await server!.kill();
      expect((await limiter.consume('key-a', 'acme')).allowed, 'answered on its own').to.equal(true);
      expect(watch.isShared()).to.equal(false);
      // Answers held under the last token stay reachable, each until its TTL ends.
      expect(watch.catalogToken('acme')).to.equal(before);
      expect(watch.epoch).to.equal(epochBefore);
      const epochWhileLost = watch.epoch;

      server = await startRedisServer(port);
      await eventually(async () => {
        await limiter.consume('key-a', 'acme');
        return watch.isShared();
      });
      expect(watch.epoch).to.equal(epochWhileLost + 1);
      await limiter.consume('key-a', 'acme');
      // The new server started empty: a fresh token, counted in it.
      expect(watch.catalogToken('acme')).to.be.a('string').and.not.equal(before);
      const direct = new Redis(server.url);
      try {
        expect(await direct.get('pcat:{v}:catalog:acme')).to.equal(watch.catalogToken('acme'));
        expect(Number(await direct.get('pcat:rl:key-a'))).to.be.at.least(1);
      } finally {
        await direct.quit();
      }
    });

    it('limits in-process, on its share, while Redis is down and shares the count again once it returns', async function () {
      const { logger, lines } = capturedLogger();
      const a = await open(logger);
      const b = await open();
      await consumeMany(a, 'before', 3);
      expect(await consumeMany(b, 'before', 3)).to.deep.equal([true, true, false]);
      // Each tells Redis it is there at most once a second: by now each has heard of the other.
      await sleep(1_100);
      await a.consume('meet');
      await b.consume('meet');

      await server!.kill();
      const during = [];
      for (let i = 0; i < 50; i += 1) during.push(await a.consume('during'));
      // A's share of a fresh window between the two instances Redis saw: 3 of 5 (rounded up).
      expect(during.filter((s) => s.allowed)).to.have.length(3);
      expect(lines().filter((l) => l.level === WARN)).to.have.length(1);

      server = await startRedisServer(port);
      const direct = new Redis(server.url);
      try {
        await eventually(async () => {
          await a.consume('probe');
          return (await direct.exists('pcat:rl:probe')) === 1;
        });
        await eventually(async () => {
          await b.consume('probe');
          return (await direct.get('pcat:rl:probe')) !== '1';
        });
      } finally {
        await direct.quit();
      }
      expect(await consumeMany(a, 'after', 3)).to.deep.equal([true, true, true]);
      expect(await consumeMany(b, 'after', 3)).to.deep.equal([true, true, false]);
      expect(lines().filter((l) => l.level === INFO && /Redis is back/.test(l.msg))).to.have.length(1);
      expect(lines().filter((l) => l.level === WARN)).to.have.length(1);
    });

    it('keeps answering while Redis hangs without closing the connection', async function () {
      const { logger, lines } = capturedLogger();
      const limiter = await open(logger);
      expect(await consumeMany(limiter, 'hang', 2)).to.deep.equal([true, true]);
      server!.pause();
      const during = [];
      for (let i = 0; i < 20; i += 1) during.push(await limiter.consume('hang'));
      // The 3 the key had left, this instance being the only one Redis saw.
      expect(during.filter((s) => s.allowed)).to.have.length(3);
      expect(lines().filter((l) => l.level === WARN)).to.have.length(1);
      server!.resume();
      await eventually(async () => {
        await limiter.consume('hang');
        return lines().some((l) => l.level === INFO && /Redis is back/.test(l.msg));
      });
      const direct = new Redis(server!.url);
      try {
        const counted = Number(await direct.get('pcat:rl:hang'));
        await limiter.consume('hang');
        expect(Number(await direct.get('pcat:rl:hang'))).to.equal(counted + 1);
      } finally {
        await direct.quit();
      }
    });
  });
});

/** Holds the event loop, as a CPU-bound request or a host that does not run this process would. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* busy */ }
}

describe('Redis rate limiter: one limit through a loss, and no loss for a slow moment', function () {
  this.timeout(30_000);
  let server: RedisServerProcess | undefined;
  const opened: RedisRateLimiter[] = [];
  const proxies: TcpProxy[] = [];

  before(async function () {
    await requireRedis(this);
  });
  beforeEach(async function () {
    server = await startRedisServer();
  });
  afterEach(async function () {
    await Promise.all(opened.splice(0).map((l) => l.close()));
    await Promise.all(proxies.splice(0).map((p) => p.close()));
    await server?.kill();
  });

  const open = async (url: string, options: { limit: number; windowMs?: number; instanceId?: string; logger?: Logger; watch?: ChangesElsewhere }): Promise<RedisRateLimiter> => {
    const limiter = new RedisRateLimiter(new RedisRequestRoundTrip({ target: redisAt(url), coolDownMs: 60_000, ...options }), options, true);
    opened.push(limiter);
    await limiter.ready();
    return limiter;
  };

  /** Two instances that have each told Redis they are there, and each heard of the other (an instance tells it at most once a second). */
  const twoInstances = async (limit: number, windowMs?: number): Promise<[RedisRateLimiter, RedisRateLimiter]> => {
    const options = { limit, ...(windowMs === undefined ? {} : { windowMs }) };
    const a = await open(server!.url, { ...options, instanceId: 'a' });
    const b = await open(server!.url, { ...options, instanceId: 'b' });
    await a.consume('meet');
    await b.consume('meet');
    await sleep(1_100);
    await a.consume('meet');
    await b.consume('meet');
    expect([a.instancesSeen(), b.instancesSeen()]).to.deep.equal([2, 2]);
    return [a, b];
  };

  /** Sends `times` requests of the key alternately to the instances; how many each admitted. */
  async function alternate(instances: readonly RedisRateLimiter[], key: string, times: number): Promise<number[]> {
    const admitted = instances.map(() => 0);
    for (let i = 0; i < times; i += 1) {
      if ((await instances[i % instances.length]!.consume(key)).allowed) admitted[i % instances.length]! += 1;
    }
    return admitted;
  }
  const sum = (counts: readonly number[]): number => counts.reduce((a, b) => a + b, 0);

  it('admits at most 1.2 times a key\'s limit across two instances when Redis is killed mid-window, whether the key was fresh or half used', async function () {
    const limit = 20;
    const [a, b] = await twoInstances(limit);
    const halfBefore = sum(await alternate([a, b], 'half', limit / 2));
    expect(halfBefore).to.equal(10);
    await alternate([a, b], 'fresh', 0);

    await server!.kill();
    const fresh = await alternate([a, b], 'fresh', limit * 10);
    const half = await alternate([a, b], 'half', limit * 10);
    expect([a.usingFallback(), b.usingFallback()]).to.deep.equal([true, true]);
    // Each admits its share: half a fresh limit; half of what the half-used key had left when Redis last answered it.
    expect(fresh, 'fresh key: admitted by each').to.deep.equal([10, 10]);
    expect(sum(fresh), 'fresh key').to.be.within(limit, limit * 1.2);
    expect(halfBefore + sum(half), 'half-used key').to.be.within(limit, limit * 1.2);
    expect(Math.min(...half), 'half-used key: each admits some').to.be.above(0);
  });

  it('admits a fresh window\'s share once the window Redis reported has ended', async function () {
    const limit = 20;
    const windowMs = 2_500;
    const [a, b] = await twoInstances(limit, windowMs);
    await alternate([a, b], 'key', 4);
    await server!.kill();
    const during = await alternate([a, b], 'key', 100);
    expect(sum(during) + 4).to.be.within(limit, limit * 1.2);
    await sleep(windowMs);
    const next = await alternate([a, b], 'key', 100);
    expect(next, 'a fresh window: half the limit each').to.deep.equal([10, 10]);
  });

  it('stays on Redis while the event loop is held up, taking the reply that waited unread', async function () {
    const { logger, lines } = capturedLogger();
    const limiter = await open(server!.url, { limit: 100, logger });
    for (let round = 1; round <= 3; round += 1) {
      const pending = limiter.consume('busy');
      busy(1_500);
      const status = await pending;
      expect(status.remaining, `round ${round}: Redis's count`).to.equal(100 - round);
      expect(limiter.usingFallback()).to.equal(false);
    }
    expect(lines().filter((l) => l.level === WARN)).to.deep.equal([]);
    expect(limiter.slowCounts(), 'no count given up for time the loop was held').to.equal(0);
  });

  it('stays on Redis while every reply is 400 ms late, counting those requests on its share, and takes a path that carries nothing as lost', async function () {
    const { logger, lines } = capturedLogger();
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(server!.url).port) });
    proxies.push(proxy);
    const limiter = await open(`redis://127.0.0.1:${proxy.port}`, { limit: 100, logger });
    expect((await limiter.consume('slow')).remaining).to.equal(99);

    proxy.delay(400);
    const slowStarted = performance.now();
    let slowAnswers = 0;
    while (performance.now() - slowStarted < 2_500) {
      expect((await limiter.consume('slow')).allowed).to.equal(true);
      slowAnswers += 1;
      expect(limiter.usingFallback(), `request ${slowAnswers} while slow`).to.equal(false);
    }
    proxy.delay(0);
    await sleep(500);
    const direct = new Redis(server!.url);
    try {
      const counted = Number(await direct.get('pcat:rl:slow'));
      const status = await limiter.consume('slow');
      expect(Number(await direct.get('pcat:rl:slow')), 'counted in Redis again').to.equal(counted + 1);
      expect(status.remaining).to.equal(100 - (counted + 1));
    } finally {
      await direct.quit();
    }
    expect(lines().filter((l) => l.level === WARN), 'no loss declared').to.deep.equal([]);
    expect(limiter.slowCounts(), 'requests counted on the share while slow').to.be.within(1, slowAnswers);

    // Nothing carried either way any more: lost once nothing has come back for lostAfterMs (1 s).
    proxy.blackHole();
    const lostStarted = performance.now();
    let requests = 0;
    while (!limiter.usingFallback()) {
      if (performance.now() - lostStarted > 10_000) throw new Error('a path that carries nothing was not taken as lost within 10 s');
      await limiter.consume('slow');
      requests += 1;
    }
    const warnings = lines().filter((l) => l.level === WARN) as { msg: string; reason?: string }[];
    expect(warnings).to.have.length(1);
    expect(warnings[0]!.reason).to.match(/answered nothing for 1000 ms/);
    expect(requests, 'requests counted on the share before the loss was declared').to.be.above(0);
  });

  it('keeps the answers it holds, within their TTL, when Redis is lost', async function () {
    const watch = new ChangesElsewhere();
    const limiter = await open(server!.url, { limit: 100, watch });
    const catalog = new MemoryProductCatalog(fixtureCatalog());
    let reads = 0;
    const cache = new CachedProductCatalog({
      findBySku: (partnerId, sku) => { reads += 1; return catalog.findBySku(partnerId, sku); },
      findById: (partnerId, id) => { reads += 1; return catalog.findById(partnerId, id); },
      findManyBySku: (partnerId, skus) => { reads += 1; return catalog.findManyBySku(partnerId, skus); },
      findManyById: (partnerId, ids) => { reads += 1; return catalog.findManyById(partnerId, ids); },
    }, { ttlMs: 60_000, watch });
    const lookup = async (): Promise<string | undefined> => {
      await limiter.consume('key-a', 'acme');
      return (await cache.findBySku('acme', 'SHARED-1' as Sku))?.result.product.title;
    };
    expect(await lookup()).to.equal('Acme shared');
    expect(await lookup()).to.equal('Acme shared');
    expect(reads).to.equal(1);

    await server!.kill();
    for (let i = 0; i < 3; i += 1) expect(await lookup()).to.equal('Acme shared');
    expect(limiter.usingFallback()).to.equal(true);
    expect(reads, 'the answer held before the loss is served').to.equal(1);
  });
});
