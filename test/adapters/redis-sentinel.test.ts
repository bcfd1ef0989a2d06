import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RedisChangeVersions } from '../../src/adapters/redis/redis-change-versions.js';
import { RedisRateLimiter } from '../../src/adapters/redis/redis-rate-limiter.js';
import type { RedisTarget } from '../../src/adapters/redis/redis-target.js';
import { RedisRequestRoundTrip } from '../../src/adapters/redis/request-round-trip.js';
import { catalogVersionKey, DEFAULT_VERSION_PREFIX } from '../../src/adapters/redis/version-keys.js';
import { ChangesElsewhere } from '../../src/application/instances/changes-elsewhere.js';
import { capturedLogger } from '../support/captured-logger.js';
import { requireRedis } from '../support/redis.js';
import { startSentinelTopology, until, type SentinelTopology } from '../support/redis-topologies.js';

const ACME_TOKEN = catalogVersionKey(DEFAULT_VERSION_PREFIX, 'acme');

describe('Redis with Sentinel (REDIS_SENTINELS): the primary the sentinels name, followed through a failover', function () {
  this.timeout(60_000);
  let topology: SentinelTopology | undefined;
  const closing: (() => Promise<unknown>)[] = [];

  before(async function () {
    await requireRedis(this);
    topology = await startSentinelTopology({ cuttable: true });
  });
  afterEach(async function () {
    for (const close of closing.splice(0).reverse()) await close();
  });
  after(async function () {
    await topology?.close();
  });

  const target = (): RedisTarget => ({
    kind: 'sentinel', sentinels: topology!.sentinels, name: topology!.name, username: null, password: null, sentinelPassword: null, tls: false,
  });
  const primary = async (): Promise<Redis> => {
    const client = new Redis({ host: '127.0.0.1', port: await topology!.primaryPort() });
    closing.push(() => client.quit());
    return client;
  };
  const instance = async (options: { logger?: ReturnType<typeof capturedLogger>['logger'] } = {}): Promise<{ limiter: RedisRateLimiter; watch: ChangesElsewhere }> => {
    const watch = new ChangesElsewhere();
    // Instances of their own: the first test's are still in \`pcat:instances\` for a window.
    const roundTrip = new RedisRequestRoundTrip({ target: target(), watch, coolDownMs: 50, instancesKey: 'pcat:instances:failover', ...(options.logger === undefined ? {} : { logger: options.logger }) });
    const limiter = new RedisRateLimiter(roundTrip, { limit: 100, keyPrefix: 'pcat:rl:failover:' }, true);
    closing.push(() => limiter.close());
    await roundTrip.ready();
    return { limiter, watch };
  };

  it('shares one limit between two instances in the primary, and hands them the announcements the operator commands make there', async function () {
    const keyPrefix = `pcat:rl:shared:${process.pid}:`;
    const open = async (): Promise<{ limiter: RedisRateLimiter; watch: ChangesElsewhere }> => {
      const watch = new ChangesElsewhere();
      const roundTrip = new RedisRequestRoundTrip({ target: target(), watch });
      const limiter = new RedisRateLimiter(roundTrip, { limit: 10, keyPrefix }, true);
      closing.push(() => limiter.close());
      await roundTrip.ready();
      return { limiter, watch };
    };
    const [a, b] = [await open(), await open()];
    const admitted = [];
    for (let i = 0; i < 8; i += 1) {
      admitted.push((await a.limiter.consume('key-a', 'acme')).allowed, (await b.limiter.consume('key-a', 'acme')).allowed);
    }
    expect(admitted.filter(Boolean)).to.have.length(10);
    expect(Number(await (await primary()).get(`${keyPrefix}key-a`))).to.equal(16);

    const versions = new RedisChangeVersions({ target: target() });
    closing.push(() => versions.close());
    await versions.catalogsChanged(['acme']);
    await a.limiter.consume('key-b', 'acme');
    expect(a.watch.catalogToken('acme')).to.equal(await (await primary()).get(ACME_TOKEN));
  });

  it('follows the sentinels to the promoted replica after the primary dies, forgets what it held though the announcement never reached the replica, and admits at most 1.2 times a limit through it', async function () {
    const topo = topology!;
    const { logger, lines } = capturedLogger();
    const { limiter, watch } = await instance({ logger });
    const { limiter: other } = await instance();
    await limiter.consume('key-a', 'acme');
    // Both instances have told Redis they are there, and the key whose limit is measured is half used.
    await until('each instance counting the other', async () => {
      await Promise.all([limiter.consume('warm-up'), other.consume('warm-up')]);
      return limiter.instancesSeen() === 2 && other.instancesSeen() === 2;
    });
    let admitted = 0;
    let sent = 0;
    const send = async (): Promise<void> => {
      if ((await [limiter, other][sent % 2]!.consume('key-h')).allowed) admitted += 1;
      sent += 1;
    };
    for (let i = 0; i < 50; i += 1) await send();
    const before = watch.catalogToken('acme');
    const oldPrimaryPort = await topo.primaryPort();
    const replicaPort = [...topo.servers.keys()].find((port) => port !== oldPrimaryPort)!;
    const replica = new Redis({ host: '127.0.0.1', port: replicaPort });
    closing.push(() => replica.quit());
    await until('the replica holds the token and the count', async () => (await replica.get(ACME_TOKEN)) === before && (await replica.get('pcat:rl:failover:key-h')) === '50');

    // An import's announcement the replica never gets: its path to the primary carries nothing from here.
    topo.cutReplication();
    const versions = new RedisChangeVersions({ target: target() });
    closing.push(() => versions.close());
    await versions.catalogsChanged(['acme']);
    await limiter.consume('key-a', 'acme');
    const announced = watch.catalogToken('acme');
    expect(announced, 'the instance saw the announcement').to.not.equal(before);
    const epochAtAnnouncement = watch.epoch;

    expect(await replica.get(ACME_TOKEN), 'the replica, still a replica, without the announcement').to.equal(before);
    expect(await replica.info('replication')).to.match(/role:slave/);
    await topo.servers.get(oldPrimaryPort)!.kill();
    await until('the sentinels promote the replica', async () => (await topo.primaryPort()) === replicaPort);
    expect(await replica.get(ACME_TOKEN), 'the announcement is lost').to.equal(before);

    // Requests keep coming: counted on the instance's share until the new primary counts them (it
    // holds the first count, replicated before the path went dark).
    await until('counting in the new primary', async () => {
      await limiter.consume('key-a', 'acme');
      await send();
      await send();
      return !limiter.usingFallback() && !other.usingFallback() && Number(await replica.get('pcat:rl:failover:key-a')) >= 2;
    });
    for (let i = 0; i < 500; i += 1) await send();
    expect(admitted, `admitted of ${sent} in the window, limit 100`).to.be.within(100, 120);
    expect(watch.epoch, 'keys and answers held before the switch forgotten').to.be.above(epochAtAnnouncement);
    expect(watch.catalogToken('acme'), 'the token the new primary holds').to.equal(before);
    const said = (pattern: RegExp): number => lines.filter((line) => pattern.test(String(line.msg))).length;
    expect(said(/Redis unavailable|Redis switched/), 'the loss said once').to.equal(1);
    expect(said(/Redis is back|Redis switched/)).to.equal(1);
  });
});

describe('Redis with Sentinel, behind passwords (REDIS_PASSWORD, REDIS_SENTINEL_PASSWORD)', function () {
  this.timeout(60_000);
  const passwords = { data: 'data-s3cret', sentinels: 'sentinel-s3cret' };
  let topology: SentinelTopology | undefined;
  const closing: (() => Promise<unknown>)[] = [];

  before(async function () {
    await requireRedis(this);
    topology = await startSentinelTopology({ passwords });
  });
  afterEach(async function () {
    for (const close of closing.splice(0).reverse()) await close();
  });
  after(async function () {
    await topology?.close();
  });

  const target = (password: string, sentinelPassword: string): RedisTarget => ({
    kind: 'sentinel', sentinels: topology!.sentinels.map(({ host, port }) => ({ host, port })), name: topology!.name, username: null, password, sentinelPassword, tls: false,
  });

  it('asks the sentinels with their password, counts in the primary with its own, and announces there', async function () {
    const watch = new ChangesElsewhere();
    const roundTrip = new RedisRequestRoundTrip({ target: target(passwords.data, passwords.sentinels), watch });
    const limiter = new RedisRateLimiter(roundTrip, { limit: 2 }, true);
    closing.push(() => limiter.close());
    await roundTrip.ready();
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await limiter.consume('key-p', 'acme')).allowed);
    expect(statuses).to.deep.equal([true, true, false]);
    expect(limiter.usingFallback()).to.equal(false);
    const versions = new RedisChangeVersions({ target: target(passwords.data, passwords.sentinels) });
    closing.push(() => versions.close());
    const before = watch.catalogToken('acme');
    await versions.catalogsChanged(['acme']);
    await limiter.consume('key-p', 'acme');
    expect(watch.catalogToken('acme')).to.be.a('string').and.not.equal(before);
  });

  it('stops the start on a wrong data password, naming REDIS_SENTINELS and REDIS_PASSWORD, never the password', async function () {
    const roundTrip = new RedisRequestRoundTrip({ target: target('wrong-s3cret', passwords.sentinels), watch: new ChangesElsewhere() });
    closing.push(() => roundTrip.close());
    let failure = '';
    await roundTrip.ready(20_000).catch((error: unknown) => {
      failure = (error as Error).message;
    });
    expect(failure).to.match(/^REDIS_SENTINELS: the primary "mymaster" of the sentinels at .* refused the login \(WRONGPASS.*\): the user name or password in REDIS_USERNAME\/REDIS_PASSWORD is wrong$/);
    expect(failure).to.not.include('s3cret');
  });
});
