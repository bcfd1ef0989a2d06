import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisChangeVersions } from '../../src/adapters/redis/redis-change-versions.js';
import { RedisRateLimiter } from '../../src/adapters/redis/redis-rate-limiter.js';
import { RedisRequestRoundTrip } from '../../src/adapters/redis/request-round-trip.js';
import { ChangesElsewhere } from '../../src/application/instances/changes-elsewhere.js';
import { readConfig } from '../../src/adapters/config/config.js';
import { freePort, requireRedis, startRedisServer, type RedisServerProcess } from '../support/redis.js';
import { redisAt } from '../../src/adapters/redis/redis-target.js';

/** A certificate authority of the test's own and a server certificate it signed, for localhost and 127.0.0.1. */
function makeCertificates(dir: string): { ca: string; cert: string; key: string } {
  const files = { ca: join(dir, 'ca.pem'), caKey: join(dir, 'ca.key'), cert: join(dir, 'server.pem'), key: join(dir, 'server.key'), csr: join(dir, 'server.csr'), ext: join(dir, 'san.ext') };
  const openssl = (...args: string[]): void => {
    const run = spawnSync('openssl', args, { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`openssl ${args[0]}: ${run.stderr}`);
  };
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', files.caKey, '-out', files.ca, '-days', '1', '-subj', '/CN=pcat test CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', files.key, '-out', files.csr, '-subj', '/CN=localhost');
  writeFileSync(files.ext, 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', files.csr, '-CA', files.ca, '-CAkey', files.caKey, '-CAcreateserial', '-out', files.cert, '-days', '1', '-extfile', files.ext);
  return { ca: files.ca, cert: files.cert, key: files.key };
}

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
