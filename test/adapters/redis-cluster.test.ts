import { expect } from 'chai';
import { Cluster } from 'ioredis';
import { RedisChangeVersions } from '../../src/adapters/redis/redis-change-versions.js';
import { RedisRateLimiter } from '../../src/adapters/redis/redis-rate-limiter.js';
import { redisAt, type RedisTarget } from '../../src/adapters/redis/redis-target.js';
import { RedisRequestRoundTrip } from '../../src/adapters/redis/request-round-trip.js';
import { catalogVersionKey, DEFAULT_VERSION_PREFIX } from '../../src/adapters/redis/version-keys.js';
import { ChangesElsewhere } from '../../src/application/instances/changes-elsewhere.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';
import { capturedLogger } from '../support/captured-logger.js';
import { cli } from '../support/cli-process.js';
import { importCatalog } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';
import { requireRedis } from '../support/redis.js';
import { ask, startCluster, until, type ClusterTopology } from '../support/redis-topologies.js';

const PARTNERS = ['acme', 'globex', 'initech', 'umbrella'];

/** Rejected calls of a command a node has counted (INFO commandstats): a CROSSSLOT or MOVED refusal is one. */
async function refusedCalls(node: { host: string; port: number }, command: string): Promise<number> {
  const line = String(await ask(node, 'INFO', 'commandstats')).split('\n').find((l) => l.startsWith(`cmdstat_${command}:`)) ?? '';
  return Number(/rejected_calls=(\d+)/.exec(line)?.[1] ?? 0) + Number(/failed_calls=(\d+)/.exec(line)?.[1] ?? 0);
}

describe('Redis Cluster (REDIS_CLUSTER_NODES): every call in one slot', function () {
  this.timeout(60_000);
  let cluster: ClusterTopology | undefined;
  let direct: Cluster | undefined;
  const closing: (() => Promise<unknown>)[] = [];

  before(async function () {
    await requireRedis(this);
    cluster = await startCluster();
    direct = new Cluster(cluster.nodes.map(({ host, port }) => ({ host, port })));
  });
  afterEach(async function () {
    for (const close of closing.splice(0).reverse()) await close();
  });
  after(async function () {
    await direct?.quit();
    await cluster?.close();
  });

  const target = (): RedisTarget => ({ kind: 'cluster', nodes: [cluster!.nodes[1]!], username: null, password: null, tls: false });
  const open = async (keyPrefix: string, limit = 100): Promise<{ limiter: RedisRateLimiter; roundTrip: RedisRequestRoundTrip; watch: ChangesElsewhere }> => {
    const watch = new ChangesElsewhere();
    const roundTrip = new RedisRequestRoundTrip({ target: target(), watch });
    const limiter = new RedisRateLimiter(roundTrip, { limit, keyPrefix }, true);
    closing.push(() => limiter.close());
    await roundTrip.ready();
    return { limiter, roundTrip, watch };
  };

  it('counts a turn\'s keys, spread over every node, and hands out the tokens of its partners, from one node given', async function () {
    const { limiter, watch } = await open('pcat:rl:spread:');
    const keys = Array.from({ length: 60 }, (_, i) => `key-${i}`);
    // One loop turn: all of these go together, split by slot.
    const statuses = await Promise.all(keys.map((key, i) => limiter.consume(key, PARTNERS[i % PARTNERS.length])));
    expect(statuses.every((status) => status.allowed && status.remaining === 99)).to.equal(true);
    expect(limiter.usingFallback()).to.equal(false);
    const counts = await Promise.all(keys.map((key) => direct!.get(`pcat:rl:spread:${key}`)));
    expect(counts.every((count) => count === '1')).to.equal(true);
    // The counters lie on all three nodes: the calls were split, not sent to one.
    const nodesHolding = await Promise.all(cluster!.nodes.map(async (node) => Number(await ask(node, 'DBSIZE'))));
    expect(nodesHolding.every((size) => size > 0)).to.equal(true);
    for (const partner of PARTNERS) expect(watch.catalogToken(partner)).to.equal(await direct!.get(catalogVersionKey(DEFAULT_VERSION_PREFIX, partner)));
  });

  it('shares one limit between two instances', async function () {
    const [a, b] = [await open('pcat:rl:shared:', 10), await open('pcat:rl:shared:', 10)];
    const admitted = [];
    for (let i = 0; i < 8; i += 1) admitted.push((await a.limiter.consume('key-a', 'acme')).allowed, (await b.limiter.consume('key-a', 'acme')).allowed);
    expect(admitted.filter(Boolean)).to.have.length(10);
  });

  it('takes the operator commands\' announcements (several partners\' catalogs at once, key changes) and tells every instance', async function () {
    const { limiter, roundTrip, watch } = await open('pcat:rl:told:');
    await Promise.all(PARTNERS.map((partner) => limiter.consume('key-a', partner)));
    const before = PARTNERS.map((partner) => watch.catalogToken(partner));
    const mark = await roundTrip.keySetVersions.keyChangesMark();
    expect(mark).to.be.a('number');
    const versions = new RedisChangeVersions({ target: target() });
    closing.push(() => versions.close());
    await versions.catalogsChanged(PARTNERS);
    await versions.keysChanged({ withdrawn: ['acme-prod'], added: ['acme-new'] });
    const keysSeq = watch.keysSeq;
    await Promise.all(PARTNERS.map((partner) => limiter.consume('key-a', partner)));
    PARTNERS.forEach((partner, i) => expect(watch.catalogToken(partner)).to.be.a('string').and.not.equal(before[i]));
    expect(watch.keysSeq).to.equal(keysSeq + 1);
    expect(await roundTrip.keySetVersions.keyChangesSince(mark!)).to.deep.equal({ withdrawn: new Set(['acme-prod']), added: new Set(['acme-new']) });
  });

  describe('the operator commands, on the same settings', function () {
    const testDb = useTestDatabase();
    before(async function () {
      await importCatalog(testDb.db, fixtureCatalog());
    });

    it('issue and revoke a key through the CLI with REDIS_CLUSTER_NODES, exiting 0, and every instance hears of both', async function () {
      const { limiter, roundTrip, watch } = await open('pcat:rl:cli:');
      await limiter.consume('key-a', 'acme');
      const env = { DATABASE_URL: testDb.url, REDIS_CLUSTER_NODES: cluster!.nodes.map(({ host, port }) => `${host}:${port}`).join(',') };
      const mark = await roundTrip.keySetVersions.keyChangesMark();
      const issued = await cli(['keys', 'issue', '--partner', 'acme', '--json'], env);
      expect(issued.code, issued.stderr).to.equal(0);
      const { id } = issued.json() as { id: string };
      const revoked = await cli(['keys', 'revoke', id], env);
      expect([revoked.code, revoked.stderr]).to.deep.equal([0, '']);
      const keysSeq = watch.keysSeq;
      await limiter.consume('key-a', 'acme');
      expect(watch.keysSeq).to.equal(keysSeq + 1);
      expect(await roundTrip.keySetVersions.keyChangesSince(mark!)).to.deep.equal({ withdrawn: new Set([id]), added: new Set([id]) });
    });
  });

  it('counts on its share against one node named by REDIS_URL, which refuses the keys of other slots, warning once and never saying Redis is back', async function () {
    const node = cluster!.nodes[0]!;
    const { logger, lines } = capturedLogger();
    const watch = new ChangesElsewhere();
    const roundTrip = new RedisRequestRoundTrip({ target: redisAt(`redis://${node.host}:${node.port}`), watch, coolDownMs: 20, logger });
    const limiter = new RedisRateLimiter(roundTrip, { limit: 100 }, true);
    closing.push(() => limiter.close());
    await roundTrip.ready();
    const refusedBefore = await refusedCalls(node, 'evalsha');
    await until('ten calls refused', async () => {
      expect((await limiter.consume('key-a', 'acme')).allowed).to.equal(true);
      return (await refusedCalls(node, 'evalsha')) >= refusedBefore + 10;
    });
    const said = (pattern: RegExp): number => lines.filter((line) => pattern.test(String(line.msg))).length;
    expect(limiter.usingFallback()).to.equal(true);
    expect(said(/Redis unavailable/)).to.equal(1);
    expect(said(/Redis is back/)).to.equal(0);
    const warning = lines.find((line) => /Redis unavailable/.test(String(line.msg)));
    expect(String(warning?.reason)).to.match(/CROSSSLOT|MOVED/);
    expect(warning?.fix).to.equal('Redis is a Cluster: name its nodes in REDIS_CLUSTER_NODES instead of one in REDIS_URL');
  });

  it('sends its scripts again to nodes that lost them (a new primary, SCRIPT FLUSH), without a loss', async function () {
    const { limiter } = await open('pcat:rl:flushed:');
    await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((key) => limiter.consume(key, 'acme')));
    for (const node of cluster!.nodes) await ask(node, 'SCRIPT', 'FLUSH');
    const statuses = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((key) => limiter.consume(key, 'acme')));
    expect(statuses.map((status) => status.remaining)).to.deep.equal([98, 98, 98, 98, 98, 98]);
    expect(limiter.usingFallback()).to.equal(false);
  });
});
