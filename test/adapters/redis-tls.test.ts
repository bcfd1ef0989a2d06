import { expect } from 'chai';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisChangeVersions } from '../../src/adapters/redis/redis-change-versions.js';
import { RedisRateLimiter } from '../../src/adapters/redis/redis-rate-limiter.js';
import { RedisRequestRoundTrip } from '../../src/adapters/redis/request-round-trip.js';
import { ChangesElsewhere } from '../../src/application/instances/changes-elsewhere.js';
import { readConfig } from '../../src/adapters/config/config.js';
import { freePort, requireRedis, startRedisServer, type RedisServerProcess } from '../support/redis.js';
import { redisAt, type RedisTarget } from '../../src/adapters/redis/redis-target.js';
import { startCluster, type ClusterTopology } from '../support/redis-topologies.js';
import { makeCertificates } from '../support/tls-certificates.js';

describe('Redis over TLS (rediss://)', function () {
  this.timeout(30_000);
  let server: RedisServerProcess | undefined;
  let tlsPort = 0;
  let ca: Buffer;
  let caFile = '';
  const closing: (() => Promise<unknown>)[] = [];

  before(async function () {
    await requireRedis(this);
    const certificates = makeCertificates(mkdtempSync(join(tmpdir(), 'pcat-redis-tls-')));
    caFile = certificates.ca;
    ca = readFileSync(caFile);
    tlsPort = await freePort();
    // TLS only: the plain port is off.
    server = await startRedisServer(undefined, [
      '--tls-port', String(tlsPort), '--port', '0', '--tls-cert-file', certificates.cert, '--tls-key-file', certificates.key,
      '--tls-ca-cert-file', certificates.ca, '--tls-auth-clients', 'no',
    ]);
  });

  afterEach(async function () {
    for (const close of closing.splice(0).reverse()) await close();
  });

  after(async function () {
    await server?.kill();
  });

  it('counts and reads the version tokens on a TLS-only Redis, its certificate verified against REDIS_TLS_CA_FILE\'s authority, by name and by address', async function () {
    for (const host of ['localhost', '127.0.0.1']) {
      const watch = new ChangesElsewhere();
      const roundTrip = new RedisRequestRoundTrip({ target: redisAt(`rediss://${host}:${tlsPort}`, ca), watch });
      const limiter = new RedisRateLimiter(roundTrip, { limit: 3 }, true);
      closing.push(() => limiter.close());
      await roundTrip.ready(5_000);
      const statuses = [];
      for (let i = 0; i < 4; i += 1) statuses.push(await limiter.consume(`tls-key-${host}`, 'acme'));
      expect(statuses.map((status) => status.allowed), host).to.deep.equal([true, true, true, false]);
      expect(limiter.usingFallback()).to.equal(false);
      // An operator command's announcement over the same TLS reaches the next count.
      const versions = new RedisChangeVersions({ target: redisAt(`rediss://${host}:${tlsPort}`, ca) });
      closing.push(() => versions.close());
      const before = watch.catalogToken('acme');
      await versions.catalogsChanged(['acme']);
      await limiter.consume(`tls-key-${host}`, 'acme');
      expect(watch.catalogToken('acme')).to.be.a('string').and.not.equal(before);
    }
  });

  it('refuses a server whose certificate no trusted authority signed, at once, naming REDIS_TLS_CA_FILE', async function () {
    const roundTrip = new RedisRequestRoundTrip({ target: redisAt(`rediss://localhost:${tlsPort}`), watch: new ChangesElsewhere() });
    closing.push(() => roundTrip.close());
    let failure = '';
    // A wait far longer than a handshake: the refusal comes at once, not when the wait ends (mocha's timeout is 30 s).
    await roundTrip.ready(20_000).catch((error: unknown) => {
      failure = (error as Error).message;
    });
    expect(failure).to.match(/^REDIS_URL: Redis at localhost:\d+ refused the TLS connection \(.*certificate.*\): .*REDIS_TLS_CA_FILE/);
  });

  it('takes rediss:// in REDIS_URL, and REDIS_TLS_CA_FILE', function () {
    const config = readConfig({ RATE_LIMIT_STORE: 'redis', REDIS_URL: `rediss://localhost:${tlsPort}`, REDIS_TLS_CA_FILE: caFile });
    expect(config.redis).to.deep.equal({ kind: 'single', url: `rediss://localhost:${tlsPort}`, tlsCaFile: caFile });
  });
});

describe('a Redis Cluster over TLS (REDIS_CLUSTER_NODES with REDIS_TLS=true)', function () {
  this.timeout(60_000);
  let cluster: ClusterTopology | undefined;
  let ca: Buffer;
  const closing: (() => Promise<unknown>)[] = [];

  before(async function () {
    await requireRedis(this);
    const certificates = makeCertificates(mkdtempSync(join(tmpdir(), 'pcat-cluster-tls-')));
    ca = readFileSync(certificates.ca);
    cluster = await startCluster({ tls: certificates });
  });
  afterEach(async function () {
    for (const close of closing.splice(0).reverse()) await close();
  });
  after(async function () {
    await cluster?.close();
  });

  const target = (tlsCa: Buffer | undefined): RedisTarget => ({ kind: 'cluster', nodes: [cluster!.nodes[0]!], username: null, password: null, tls: true, tlsCa });

  it('counts and hands out the tokens across the nodes, the certificates verified against REDIS_TLS_CA_FILE, and takes the operator commands\' announcements', async function () {
    const watch = new ChangesElsewhere();
    const roundTrip = new RedisRequestRoundTrip({ target: target(ca), watch });
    const limiter = new RedisRateLimiter(roundTrip, { limit: 3 }, true);
    closing.push(() => limiter.close());
    await roundTrip.ready();
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => limiter.consume(`tls-cluster-${i}`, 'acme')));
    expect(statuses.every((status) => status.allowed && status.remaining === 2)).to.equal(true);
    expect(limiter.usingFallback()).to.equal(false);
    const versions = new RedisChangeVersions({ target: target(ca) });
    closing.push(() => versions.close());
    const before = watch.catalogToken('acme');
    await versions.catalogsChanged(['acme']);
    await limiter.consume('tls-cluster-0', 'acme');
    expect(watch.catalogToken('acme')).to.be.a('string').and.not.equal(before);
  });

  it('counts nothing in a Cluster whose certificates no trusted authority signed: not ready at start, and on its share', async function () {
    // ioredis reports a Cluster node's TLS failure as a closed connection: the start waits, and warns.
    const roundTrip = new RedisRequestRoundTrip({ target: target(undefined), watch: new ChangesElsewhere(), timeoutMs: 500 });
    const limiter = new RedisRateLimiter(roundTrip, { limit: 3 }, true);
    closing.push(() => limiter.close());
    let failure = '';
    await roundTrip.ready(2_000).catch((error: unknown) => {
      failure = (error as Error).message;
    });
    expect(failure).to.match(/^REDIS_CLUSTER_NODES: the Redis Cluster at 127\.0\.0\.1:\d+ did not answer/);
    expect((await limiter.consume('tls-cluster-untrusted', 'acme')).allowed).to.equal(true);
    expect(limiter.usingFallback()).to.equal(true);
  });
});
