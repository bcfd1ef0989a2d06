import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LookupResult } from '../src/domain/lookup-result.js';
import { fixtureDocument, KEYS } from './fixtures/catalog-fixture.js';
import { cli } from './support/cli-process.js';
import { useTestDatabase } from './support/mariadb.js';
import { freePort, requireRedis, startRedisServer, type RedisServerProcess } from './support/redis.js';
import { startService, type ServiceProcess } from './support/service-process.js';

/*
 * Each way the project is started, once, on the Node.js running the tests. `.ci/run` runs the whole
 * suite on the oldest Node.js line that package.json's engines names, and this file (with the domain,
 * the application and the client package's tests) on the others: what can differ between lines is how
 * the runtime loads, listens, reads files and talks to MariaDB and Redis, and each of these starts does.
 */
describe('each entry point, started once', function () {
  this.timeout(60_000);
  const running: ServiceProcess[] = [];
  afterEach(function () {
    for (const service of running.splice(0)) service.kill();
  });
  const start = (env: Record<string, string>, script: 'start' | 'start:prod'): ServiceProcess => {
    const service = startService(env, script);
    running.push(service);
    return service;
  };

  it('npm start (tsx) on memory storage prints a demo key whose lookup answers 200', async function () {
    const service = start({}, 'start');
    const [, url, path] = await service.waitFor(/curl -s -H 'Authorization: Bearer pcat_live_[A-Za-z0-9]{40}' (http:\/\/[^\s/]+)(\S+)/);
    const [, key] = /(pcat_live_[A-Za-z0-9]{40})/.exec(service.stdout())!;
    const response = await fetch(`${url!}${path!}`, { headers: { Authorization: `Bearer ${key!}` } });
    expect(response.status).to.equal(200);
    const { data } = (await response.json()) as { data: LookupResult };
    expect(data.product.videos.length).to.be.greaterThan(0);
  });

  describe('on MySQL and Redis', function () {
    const testDb = useTestDatabase({ migrated: false });
    let dir = '';
    let redis: RedisServerProcess | undefined;
    before(async function () {
      await requireRedis(this);
      dir = await mkdtemp(join(tmpdir(), 'pcat-entry-'));
      redis = await startRedisServer();
    });
    after(async function () {
      await redis?.kill();
      if (dir !== '') await rm(dir, { recursive: true, force: true });
    });
    const env = (): Record<string, string> => ({ STORAGE: 'mysql', DATABASE_URL: testDb.url, RATE_LIMIT_STORE: 'redis', REDIS_URL: redis!.url });

    it('npm run cli (tsx) migrates the database and imports a catalog file', async function () {
      const file = join(dir, 'catalog.json');
      await writeFile(file, JSON.stringify(fixtureDocument()));
      const migrated = await cli(['migrate'], { DATABASE_URL: testDb.url }, 'cli');
      expect(migrated.code, migrated.stderr).to.equal(0);
      const imported = await cli(['import', file, '--json'], env(), 'cli');
      expect(imported.code, imported.stderr).to.equal(0);
      expect(imported.json()).to.have.property('products');
    });

    it('the compiled start (npm run start:prod) answers what was imported, a 304 for its ETag, and counts the key in Redis', async function () {
      const service = start({ ...env(), RATE_LIMIT_PER_MINUTE: '3' }, 'start:prod');
      const [, url] = await service.waitFor(/"url":"(http:\/\/[^"]+)"/);
      const lookup = `${url!}/api/v1/public/sku/TENT-2P`;
      const first = await fetch(lookup, { headers: { 'X-API-Key': KEYS.acme } });
      expect(first.status).to.equal(200);
      expect(((await first.json()) as { data: LookupResult }).data.sku).to.equal('TENT-2P');
      const etag = first.headers.get('etag')!;
      const again = await fetch(lookup, { headers: { 'X-API-Key': KEYS.acme, 'If-None-Match': etag } });
      expect(again.status).to.equal(304);
      expect((await fetch(lookup, { headers: { 'X-API-Key': KEYS.acme } })).status).to.equal(200);
      const limited = await fetch(lookup, { headers: { 'X-API-Key': KEYS.acme } });
      expect(limited.status).to.equal(429);
    });

    it('the portal in a process of its own (ROLE=portal, compiled) serves its sign-in page', async function () {
      const service = start({ ...env(), ROLE: 'portal', PORTAL_PORT: String(await freePort()) }, 'start:prod');
      const [, portalUrl] = await service.waitFor(/"portalUrl":"(http:\/\/[^"]+)"/);
      const page = await fetch(`${portalUrl!}/portal/login`);
      expect(page.status).to.equal(200);
      expect(await page.text()).to.include('<form');
    });
  });
});
