import { expect } from 'chai';
import { Redis } from 'ioredis';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureDocument, KEYS } from './fixtures/catalog-fixture.js';
import { useTestDatabase } from './support/mariadb.js';
import { ensureStandInBase, installed, podman, RUN_LIMITS } from './support/podman.js';
import { freePort, requireRedis, startRedisServer, type RedisServerProcess } from './support/redis.js';
import { until } from './support/redis-topologies.js';

/*
 * The image as a platform team runs it: the Dockerfile built unchanged with podman, on a stand-in of
 * its default base (no image can be pulled here; test/support/podman.ts makes one from Debian's and
 * the npm registry's packages and keeps it), then run from it with the host's network, a read-only
 * root filesystem and its own non-root user: the CLI migrates and imports into a database of this
 * test's own on the machine's MariaDB, and the service serves a lookup counted in a redis-server of
 * this test's own, then stops cleanly on `podman stop`.
 */

const IMAGE = 'localhost/partner-catalog-api:test';

/** The Dockerfile's default base, as its ARG names it. */
function defaultBase(): { image: string; major: number } {
  const match = /^ARG NODE_IMAGE=(node:(\d+)-[\w.-]+)$/m.exec(readFileSync('Dockerfile', 'utf8'));
  if (match === null) throw new Error('Dockerfile: no `ARG NODE_IMAGE=node:<major>-...` line');
  return { image: `docker.io/library/${match[1]!}`, major: Number(match[2]) };
}

describe('the image, built from the Dockerfile and run with podman', function () {
  this.timeout(900_000);
  const testDb = useTestDatabase({ migrated: false });
  let redis: RedisServerProcess | undefined;
  let dir = '';
  const containers: string[] = [];

  before(async function () {
    const missing = ['podman', 'mmdebstrap'].filter((command) => !installed(command));
    if (missing.length > 0) {
      if (process.env.CI === 'true') throw new Error(`${missing.join(' and ')} missing, and CI=true forbids skipping (Debian: apt-get install podman runc mmdebstrap)`);
      process.stderr.write(`\n!!! ${missing.join(' and ')} missing: SKIPPING the image test (apt-get install podman runc mmdebstrap) !!!\n\n`);
      this.skip();
    }
    await requireRedis(this);
    redis = await startRedisServer();
    dir = mkdtempSync(join(tmpdir(), 'pcat-image-'));
    const base = defaultBase();
    const started = performance.now();
    const made = await ensureStandInBase(base.image, base.major);
    const baseSeconds = (performance.now() - started) / 1_000;
    const built = await podman(['build', ...RUN_LIMITS, '-t', IMAGE, '.']);
    expect(built.code, built.stderr.slice(-4_000)).to.equal(0);
    const size = Number((await podman(['image', 'inspect', '--format', '{{.Size}}', IMAGE])).stdout.trim());
    const baseSize = Number((await podman(['image', 'inspect', '--format', '{{.Size}}', base.image])).stdout.trim());
    process.stdout.write(`      image: base ${made} in ${baseSeconds.toFixed(0)} s, built in ${((performance.now() - started) / 1_000 - baseSeconds).toFixed(0)} s; ` +
      `${(size / 1e6).toFixed(0)} MB, of which the base ${(baseSize / 1e6).toFixed(0)} MB\n`);
  });
  after(async function () {
    for (const name of containers) await podman(['rm', '--force', name]);
    await redis?.kill();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  /** `podman run --rm` of the image, read-only, with the host's network; the command and environment given. */
  const runOnce = (env: Record<string, string>, command: readonly string[], mounts: readonly string[] = []): ReturnType<typeof podman> =>
    podman(['run', '--rm', '--read-only', ...RUN_LIMITS, ...mounts.flatMap((m) => ['-v', m]), ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]), IMAGE, ...command]);

  it('migrates and imports with the CLI in it, serves a lookup counted in Redis, read-only as a non-root user, and stops cleanly on podman stop', async function () {
    const storageEnv = { DATABASE_URL: testDb.url, REDIS_URL: redis!.url };
    const migrated = await runOnce(storageEnv, ['node', 'dist/cli.js', 'migrate']);
    expect(migrated.code, migrated.stderr).to.equal(0);
    const file = join(dir, 'catalog.json');
    writeFileSync(file, JSON.stringify(fixtureDocument()));
    const imported = await runOnce(storageEnv, ['node', 'dist/cli.js', 'import', '/data/catalog.json'], [`${file}:/data/catalog.json:ro`]);
    expect(imported.code, imported.stderr).to.equal(0);

    const port = await freePort();
    const name = `pcat-image-test-${process.pid}`;
    containers.push(name);
    const started = await podman(['run', '-d', '--name', name, '--read-only', ...RUN_LIMITS,
      ...Object.entries({ ...storageEnv, STORAGE: 'mysql', RATE_LIMIT_STORE: 'redis', PORT: String(port), PORTAL_PORT: '0', METRICS_PORT: '0' }).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
      IMAGE]);
    expect(started.code, started.stderr).to.equal(0);
    const base = `http://127.0.0.1:${port}`;
    await until('the container ready', async () => (await fetch(`${base}/readyz`).catch(() => null))?.status === 200, 6_000);

    const lookup = await fetch(`${base}/api/v1/public/sku/TENT-2P`, { headers: { 'X-API-Key': KEYS.acme } });
    expect(lookup.status).to.equal(200);
    expect(((await lookup.json()) as { data: { sku: string } }).data.sku).to.equal('TENT-2P');
    const client = new Redis(redis!.url);
    try {
      expect(await client.keys('pcat:rl:*'), 'the lookup counted in Redis').to.have.length.above(0);
    } finally {
      client.disconnect();
    }

    const user = await podman(['exec', name, 'id', '-u']);
    expect(user.stdout.trim(), 'the user inside').to.equal('10001');
    const write = await podman(['exec', name, 'sh', '-c', 'touch /app/written || touch /written']);
    expect(write.code, 'a write to the root filesystem').to.not.equal(0);

    const stopped = await podman(['stop', '--time', '30', name]);
    expect(stopped.code, stopped.stderr).to.equal(0);
    const exitCode = await podman(['inspect', '--format', '{{.State.ExitCode}}', name]);
    expect(exitCode.stdout.trim(), 'exit code on podman stop').to.equal('0');
    const logs = await podman(['logs', name]);
    expect(logs.stdout).to.include('"msg":"stopped"');
    expect(logs.stdout + logs.stderr, 'no key in the logs').to.not.include(KEYS.acme);
  });
});
