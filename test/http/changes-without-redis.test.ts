import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureCatalog, KEYS, refinedDocument } from '../fixtures/catalog-fixture.js';
import { cli } from '../support/cli-process.js';
import { importCatalog } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';
import { statementsRun } from '../support/mysql-statements.js';
import { expectNoKeyInOutput } from '../support/service-logs.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

/*
 * One real service process on MySQL without Redis, answers cached for an hour, and the real CLI
 * importing in a process of its own: nothing can tell the instance of the import but the versions
 * the import wrote in the database (decisions: changes seen without Redis).
 */

const SKU_PATH = '/api/v1/public/sku/TENT-2P';

async function transcript(url: string): Promise<string | undefined> {
  const response = await fetch(`${url}${SKU_PATH}`, { headers: { 'X-API-Key': KEYS.acme }, signal: AbortSignal.timeout(5_000) });
  expect(response.status).to.equal(200);
  const body = await response.json() as { data: { product: { pdp_urls: Array<{ json_ld: { transcript?: string } | null }> } } };
  return body.data.product.pdp_urls[0]?.json_ld?.transcript;
}

describe('one instance on MySQL without Redis, answers cached for an hour', function () {
  this.timeout(60_000);
  const testDb = useTestDatabase();
  let service: ServiceProcess | undefined;
  /** In front of the database: the statements the instance sends, counted on the wire. */
  let watch: TcpProxy | undefined;
  let dir = '';

  before(async function () {
    await importCatalog(testDb.db, fixtureCatalog());
    dir = mkdtempSync(join(tmpdir(), 'pcat-no-redis-'));
  });
  after(async function () {
    if (service !== undefined) expectNoKeyInOutput([service]);
    service?.kill();
    await watch?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves an import made by the CLI on its next request, and held answers after one read of their version', async function () {
    const target = new URL(testDb.url);
    watch = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, { capture: true });
    const databaseUrl = new URL(testDb.url);
    databaseUrl.port = String(watch.port);
    service = startService({ STORAGE: 'mysql', DATABASE_URL: databaseUrl.toString(), CACHE_TTL_MS: '3600000', WEBHOOK_POLL_MS: '60000' });
    const url = (await service.waitFor(/"url":"(http:\/\/[^"]+)"/))[1]!;

    expect(await transcript(url)).to.equal('Transcript of tent-pitch.');
    const statementsOf = async (): Promise<number> => {
      const before = statementsRun(watch!);
      expect(await transcript(url)).to.be.a('string');
      return statementsRun(watch!) - before;
    };
    // A held answer: the key's read (no key set is held without Redis) and the catalog's version.
    expect(await statementsOf(), 'statements for a held answer').to.equal(2);

    const file = join(dir, 'refined.json');
    writeFileSync(file, JSON.stringify(refinedDocument('Imported by the CLI, no Redis anywhere.')));
    const run = await cli(['import', file], { DATABASE_URL: testDb.url });
    expect(run.code, run.stderr).to.equal(0);
    expect(await transcript(url), 'the very next request').to.equal('Imported by the CLI, no Redis anywhere.');
    for (let i = 0; i < 5; i += 1) expect(await statementsOf(), 'statements for the new answer, held').to.equal(2);
  });
});
