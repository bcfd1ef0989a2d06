import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { fixtureCatalog, fixtureDocument, KEYS } from '../fixtures/catalog-fixture.js';
import { cli } from '../support/cli-process.js';
import { importCatalog } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';
import { requireRedis, startRedisServer, type RedisServerProcess } from '../support/redis.js';
import { expectNoKeyInOutput } from '../support/service-logs.js';
import { startService, type ServiceProcess } from '../support/service-process.js';

/*
 * Test keys as several instances serve them: two real service processes on one MariaDB database and
 * one redis-server of the test's own, answers cached for an hour, changes made through the real CLI.
 * A sandbox changed by an import, and a test key revoked, must show on the very next request on
 * both, as they do for live keys.
 */

const API = '/api/v1/public';
const AN_HOUR_MS = '3600000';

interface Seen {
  readonly status: number;
  readonly body: { error?: string; data?: { sku: string; product: { title: string } } } & { data?: unknown };
}

async function get(url: string, key: string, path: string): Promise<Seen> {
  const response = await fetch(`${url}${API}${path}`, { headers: { 'X-API-Key': key }, signal: AbortSignal.timeout(5_000) });
  return { status: response.status, body: (await response.json()) as Seen['body'] };
}

const titleOf = (seen: Seen): string | undefined => (seen.body.data as { product?: { title: string } } | undefined)?.product?.title;

/** The fixture, with a sandbox section of acme's own: a retitled tent, and a product the demo has not. */
function withSandbox(): Record<string, unknown> {
  const document = fixtureDocument() as { partners: Array<Record<string, unknown> & { products: Array<Record<string, unknown>> }> };
  const acme = document.partners[0]!;
  const [tent, abc] = acme.products;
  acme.sandbox = { products: [{ ...tent, title: 'Sandbox tent' }, { ...abc, sku: 'SANDBOX-ONLY', title: 'Only in the sandbox' }] };
  return document;
}

describe('test keys on two instances sharing one database and one Redis, answers cached for an hour', function () {
  this.timeout(120_000);
  const testDb = useTestDatabase();
  const services: ServiceProcess[] = [];
  let redis: RedisServerProcess | undefined;
  let dir = '';

  before(async function () {
    await requireRedis(this);
    dir = mkdtempSync(join(tmpdir(), 'pcat-test-keys-'));
  });
  beforeEach(async function () {
    await importCatalog(testDb.db, fixtureCatalog());
    redis = await startRedisServer();
  });
  afterEach(async function () {
    expectNoKeyInOutput(services);
    for (const service of services.splice(0)) service.kill();
    await redis?.kill();
  });
  after(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  const operatorEnv = (): Record<string, string> => ({ DATABASE_URL: testDb.url, REDIS_URL: redis!.url });

  async function startInstances(): Promise<string[]> {
    const started = [0, 1].map(() => startService({
      STORAGE: 'mysql', DATABASE_URL: testDb.url, RATE_LIMIT_STORE: 'redis', REDIS_URL: redis!.url, CACHE_TTL_MS: AN_HOUR_MS,
    }));
    services.push(...started);
    return Promise.all(started.map(async (s) => (await s.waitFor(/"url":"(http:\/\/[^"]+)"/))[1]!));
  }

  async function operator(args: string[]): Promise<unknown> {
    const run = await cli(args, operatorEnv());
    expect(run.code, run.stderr).to.equal(0);
    return args.includes('--json') ? run.json() : run.stdout;
  }

  it('shows a re-imported sandbox, and a revoked test key, on the next request on both; the live catalog and its key are untouched', async function () {
    const urls = await startInstances();
    const issued = await operator(['keys', 'issue', '--partner', 'acme', '--test', '--json']) as { id: string; key: string; mode: string };
    expect(issued.mode).to.equal('test');
    // Both hold the demo sandbox, cached, and the live answer beside it.
    for (const url of urls) {
      expect(titleOf(await get(url, issued.key, '/sku/TENT-2P'))).to.equal('Acme Ridgeline 2-Person Tent');
      expect((await get(url, issued.key, '/sku/PACK-40L')).status).to.equal(200);
      expect((await get(url, issued.key, '/sku/SANDBOX-ONLY')).status).to.equal(404);
    }
    const live = await get(urls[0]!, KEYS.acme, '/sku/TENT-2P');
    const feedBefore = (await get(urls[0]!, issued.key, '/changes')).body as unknown as { next_cursor: string };

    const file = join(dir, 'with-sandbox.json');
    writeFileSync(file, JSON.stringify(withSandbox()));
    const summary = await operator(['import', file, '--json']) as Record<string, unknown>;
    // The live catalog is the fixture as before. Acme's sandbox tent keeps its identity (and ID), its
    // other demo products go; globex's sandbox is the demo products as before.
    expect(summary.products).to.deep.include({ created: 0, updated: 0, deleted: 0 });
    expect(summary.sandbox_products).to.deep.equal({ created: 1, updated: 1, unchanged: 4, deleted: 3 });

    for (const url of urls) {
      expect(titleOf(await get(url, issued.key, '/sku/TENT-2P')), url).to.equal('Sandbox tent');
      expect(titleOf(await get(url, issued.key, '/sku/SANDBOX-ONLY')), url).to.equal('Only in the sandbox');
      expect((await get(url, issued.key, '/sku/PACK-40L')).status, url).to.equal(404);
      expect(await get(url, KEYS.acme, '/sku/TENT-2P'), url).to.deep.equal(live);
      expect((await get(url, KEYS.acme, '/sku/SANDBOX-ONLY')).status, url).to.equal(404);
    }
    // The sandbox's feed tells its partner's test suite what changed, as a live feed would.
    const changes = (await get(urls[1]!, issued.key, `/changes?cursor=${feedBefore.next_cursor}`)).body as unknown as { data: { sku: string; change: string }[] };
    expect(changes.data.map((entry) => `${entry.sku} ${entry.change}`).sort()).to.deep.equal([
      'LANTERN-LED deleted', 'PACK-40L deleted', 'SANDBOX-ONLY upserted', 'STOVE.1_CLASSIC deleted', 'TENT-2P upserted',
    ]);

    await operator(['keys', 'revoke', issued.id]);
    for (const url of urls) {
      const refused = await get(url, issued.key, '/sku/TENT-2P');
      expect(refused.status, url).to.equal(401);
      expect(refused.body.error).to.equal('invalid_api_key');
      expect((await get(url, KEYS.acme, '/sku/TENT-2P')).status, url).to.equal(200);
    }
    const listed = await operator(['keys', 'list', '--partner', 'acme', '--json']) as { id: string; mode: string; revoked_at: string | null }[];
    expect(listed.find((key) => key.id === issued.id)).to.deep.include({ mode: 'test' });
    // The sandbox is stored as a catalog of its own, under an id no partner can have.
    const { rows } = await sql<{ partner_id: string; n: number | string }>`select partner_id, count(*) as n from products where partner_id like '~%' group by partner_id order by partner_id`.execute(testDb.db);
    expect(rows.map((row) => [row.partner_id, Number(row.n)])).to.deep.equal([['~acme', 2], ['~globex', 4]]);
  });

  it('refuses a sandbox id wherever an operator names a partner (keys, admins, webhooks), and a file whose sandbox takes an error SKU, changing nothing', async function () {
    for (const args of [
      ['keys', 'issue', '--partner', '~acme'], ['keys', 'list', '--partner', '~acme'], ['admins', 'invite', '--partner', '~acme', '--email', 'a@acme.example'],
      ['webhooks', 'add', '--partner', '~acme', '--url', 'https://hooks.example.com/sandbox'], ['webhooks', 'list', '--partner', '~acme'],
    ]) {
      const run = await cli(args, operatorEnv());
      expect(run.code, args.join(' ')).to.not.equal(0);
      expect(run.stderr, args.join(' ')).to.include('no partner with id "~acme"');
    }
    const document = withSandbox() as { partners: Array<{ sandbox: { products: Array<Record<string, unknown>> } }> };
    document.partners[0]!.sandbox.products[1]!.sku = 'TEST-503';
    const file = join(dir, 'reserved.json');
    writeFileSync(file, JSON.stringify(document));
    const before = await sql<{ n: number }>`select count(*) as n from products`.execute(testDb.db);
    const run = await cli(['import', file], operatorEnv());
    expect(run.code).to.not.equal(0);
    expect(run.stderr).to.include('partners[0].sandbox.products[1].sku: "TEST-503" is kept for the error it answers a test key; give the product another SKU');
    expect((await sql<{ n: number }>`select count(*) as n from products`.execute(testDb.db)).rows).to.deep.equal(before.rows);
  });
});
