import { expect } from 'chai';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { cli } from './support/cli-process.js';
import { useTestDatabase } from './support/mariadb.js';
import { startRedisServer, type RedisServerProcess } from './support/redis.js';
import { ensureBuilt, ROOT } from './support/script-command.js';
import { startService, type ServiceProcess } from './support/service-process.js';

interface LockedPackage { readonly dev?: boolean; readonly link?: boolean }

/**
 * What `npm ci --omit=dev && npm run build` leaves (README, production), without the network:
 * dist/, the demo catalog and the installed packages the lockfile does not mark as development-only,
 * copied outside the project so nothing resolves into its full node_modules.
 */
function productionCopy(): string {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'pcat-production-'));
  for (const path of ['package.json', 'package-lock.json', 'dist', 'catalogs']) cpSync(join(ROOT, path), join(dir, path), { recursive: true });
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockedPackage> };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.startsWith('node_modules/') || entry.dev === true || entry.link === true || !existsSync(join(ROOT, path))) continue;
    // A package's own node_modules are entries of their own, copied or not on their own merits.
    cpSync(join(ROOT, path), join(dir, path), { recursive: true, filter: (from) => !relative(join(ROOT, path), from).split(sep).includes('node_modules') });
  }
  return dir;
}

describe('the compiled service on production dependencies only', function () {
  this.timeout(60_000);
  const testDb = useTestDatabase({ migrated: false });
  let dir: string;
  let redis: RedisServerProcess | undefined;
  const running: ServiceProcess[] = [];

  before(async function () {
    dir = productionCopy();
    redis = await startRedisServer();
  });
  afterEach(function () {
    for (const service of running.splice(0)) service.kill();
  });
  after(async function () {
    await redis?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (env: Record<string, string>): ServiceProcess => {
    const service = startService(env, 'start:prod', dir);
    running.push(service);
    return service;
  };

  it('has no development tool to lean on', function () {
    for (const tool of ['tsx', 'typescript', 'mocha']) expect(existsSync(join(dir, 'node_modules', tool)), tool).to.equal(false);
  });

  it('starts the demo, and serves a lookup, the OpenAPI document and the docs page\'s files', async function () {
    const service = start({});
    const [, url, path] = await service.waitFor(/curl -s -H 'Authorization: Bearer pcat_live_[A-Za-z0-9]{40}' (http:\/\/[^\s/]+)(\S+)/);
    const [, key] = /(pcat_live_[A-Za-z0-9]{40})/.exec(service.stdout())!;
    expect((await fetch(`${url!}${path!}`, { headers: { Authorization: `Bearer ${key!}` } })).status).to.equal(200);
    for (const file of ['/openapi.json', '/docs', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css']) {
      expect((await fetch(`${url!}${file}`)).status, file).to.equal(200);
    }
  });

  it('runs the operator commands on MySQL and Redis, and serves the key they issued', async function () {
    const env = { DATABASE_URL: testDb.url, REDIS_URL: redis!.url };
    const run = async (args: string[]): Promise<string> => {
      const result = await cli(args, env, 'cli:prod', dir);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).to.equal(0);
      return result.stdout;
    };
    await run(['check', 'catalogs/demo-catalog.json']);
    await run(['migrate']);
    await run(['import', 'catalogs/demo-catalog.json']);
    const { key } = JSON.parse(await run(['keys', 'issue', '--partner', 'demo', '--json'])) as { key: string };

    const service = start({ ...env, STORAGE: 'mysql', RATE_LIMIT_STORE: 'redis' });
    const [, url] = await service.waitFor(/"url":"(http:\/\/[^"]+)"/);
    const response = await fetch(`${url!}/api/v1/public/sku/TENT-2P`, { headers: { 'X-API-Key': key } });
    expect(response.status).to.equal(200);
  });
});
