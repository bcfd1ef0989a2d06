import { expect } from 'chai';
import { CachedProductCatalog } from '../../src/adapters/cache/cached-product-catalog.js';
import { openMysqlStorage, type MysqlStorage } from '../../src/adapters/mysql/mysql-storage.js';
import { isStorageUnavailable } from '../../src/application/common/storage-unavailable.js';
import { ChangesElsewhere } from '../../src/application/instances/changes-elsewhere.js';
import type { LookupAnswer } from '../../src/domain/lookup-answer.js';
import { parseSku } from '../../src/domain/sku.js';
import { fixtureCatalog, fixtureDocument, refinedDocument } from '../fixtures/catalog-fixture.js';
import { importCatalog, importDocument } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';
import { statementsRun } from '../support/mysql-statements.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { MysqlCatalogStore } from '../../src/adapters/mysql/mysql-catalog-store.js';
import { MysqlCursorKeys } from '../../src/adapters/mysql/mysql-cursor-keys.js';

/*
 * The catalogs' versions as the database holds them (decisions: changes seen without Redis), on a
 * real MariaDB, read through a proxy that counts the statements the instance sends.
 */

const TENT = parseSku('TENT-2P');
const AN_HOUR_MS = 3_600_000;

function transcriptOf(answer: LookupAnswer | null): string | undefined {
  const body = JSON.parse(answer!.body.toString('utf8')) as { data: { product: { pdp_urls: Array<{ json_ld: { transcript?: string } | null }> } } };
  return body.data.product.pdp_urls[0]?.json_ld?.transcript;
}

describe('catalog versions in the database (MySQL)', function () {
  this.timeout(60_000);
  const testDb = useTestDatabase();
  let proxy: TcpProxy | undefined;
  let storage: MysqlStorage;

  before(async function () {
    const target = new URL(testDb.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, { capture: true });
    const url = new URL(testDb.url);
    url.port = String(proxy.port);
    storage = await openMysqlStorage({ url: url.toString() });
  });
  beforeEach(async function () {
    await importCatalog(testDb.db, fixtureCatalog());
  });
  after(async function () {
    // Skipped without MariaDB: nothing was opened.
    if (proxy === undefined) return;
    await storage.close();
    await proxy.close();
  });

  const reimport = async (document: Record<string, unknown>): Promise<void> => {
    await importDocument(new MysqlCatalogStore(testDb.db), document, new MysqlCursorKeys(testDb.db, { secret: null }));
  };

  it("moves a catalog's version in the import that changes its answers, and in no other", async function () {
    const { catalogVersions: versions } = storage;
    const [acme, globex] = await Promise.all([versions.versionOf('acme'), versions.versionOf('globex')]);
    await reimport(fixtureDocument());
    expect(await versions.versionOf('acme'), 'an import that changes nothing').to.equal(acme);
    await reimport(refinedDocument('Refined.'));
    const refined = await versions.versionOf('acme');
    expect(refined, "an import that changes acme's answers").to.not.equal(acme);
    expect(await versions.versionOf('globex'), 'another partner').to.equal(globex);
    await reimport(fixtureDocument());
    expect(await versions.versionOf('acme'), 'the answer put back is a change too').to.not.be.oneOf([acme, refined]);
    expect(await versions.versionOf('nobody'), 'a catalog not stored').to.equal(await versions.versionOf('nobody-else'));
  });

  it('reads the versions asked for in one turn with one statement, each catalog once, whatever their number', async function () {
    const { catalogVersions: versions } = storage;
    await versions.versionOf('acme');
    const before = statementsRun(proxy!);
    const asked = Array.from({ length: 300 }, (_, i) => versions.versionOf(['acme', 'globex', 'nobody'][i % 3]!));
    const read = await Promise.all(asked);
    expect(statementsRun(proxy!) - before, 'statements for 300 reads in one turn').to.equal(1);
    expect(new Set(read.filter((_, i) => i % 3 === 0)).size).to.equal(1);
    // 600 catalogs in one turn: more than one statement takes (512), in two.
    const many = Array.from({ length: 600 }, (_, i) => `catalog-${i}`);
    const beforeMany = statementsRun(proxy!);
    await Promise.all(many.map((id) => versions.versionOf(id)));
    expect(statementsRun(proxy!) - beforeMany, 'statements for 600 catalogs in one turn').to.equal(2);
    // Each turn reads for itself: a read sent before a request came may miss what committed since.
    const beforeTurns = statementsRun(proxy!);
    await versions.versionOf('acme');
    await versions.versionOf('acme');
    expect(statementsRun(proxy!) - beforeTurns, 'statements for two turns').to.equal(2);
  });

  it('serves a held answer after one read of its version, and the import that moved the version on the next lookup, however long the TTL', async function () {
    const cache = new CachedProductCatalog(storage.catalog, { ttlMs: AN_HOUR_MS, versions: storage.catalogVersions });
    expect(transcriptOf(await cache.findBySku('acme', TENT))).to.equal('Transcript of tent-pitch.');
    const before = statementsRun(proxy!);
    expect(transcriptOf(await cache.findBySku('acme', TENT))).to.equal('Transcript of tent-pitch.');
    expect(statementsRun(proxy!) - before, 'statements for a held answer: its version alone').to.equal(1);
    await reimport(refinedDocument('Refined without Redis.'));
    expect(transcriptOf(await cache.findBySku('acme', TENT))).to.equal('Refined without Redis.');
    expect((await cache.findManyBySku('acme', [TENT])).map(transcriptOf)).to.deep.equal(['Refined without Redis.']);
  });

  it('reads no version while the shared store tells the changes, and reads them from the moment it is lost', async function () {
    const watch = new ChangesElsewhere();
    const cache = new CachedProductCatalog(storage.catalog, { ttlMs: AN_HOUR_MS, watch, versions: storage.catalogVersions });
    watch.catalogSeen('acme', 'token-1');
    await cache.findBySku('acme', TENT);
    const before = statementsRun(proxy!);
    expect(transcriptOf(await cache.findBySku('acme', TENT))).to.equal('Transcript of tent-pitch.');
    expect(statementsRun(proxy!) - before, 'statements for a held answer while the store tells').to.equal(0);
    // Redis lost: an import it was told of, or not, is seen through the database.
    watch.sharingLost();
    await reimport(refinedDocument('Refined while Redis is lost.'));
    expect(transcriptOf(await cache.findBySku('acme', TENT))).to.equal('Refined while Redis is lost.');
    const held = statementsRun(proxy!);
    expect(transcriptOf(await cache.findBySku('acme', TENT))).to.equal('Refined while Redis is lost.');
    expect(statementsRun(proxy!) - held, 'statements for a held answer while Redis is lost').to.equal(1);
  });

  it('serves the answers it holds while neither Redis nor the database can tell a version, and no other', async function () {
    // A storage of the test's own, behind a proxy of its own: the path is cut for good.
    const target = new URL(testDb.url);
    const cut = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    const url = new URL(testDb.url);
    url.port = String(cut.port);
    const alone = await openMysqlStorage({ url: url.toString() });
    try {
      const watch = new ChangesElsewhere();
      const cache = new CachedProductCatalog(alone.catalog, { ttlMs: AN_HOUR_MS, watch, versions: alone.catalogVersions });
      watch.sharingLost();
      expect(transcriptOf(await cache.findBySku('acme', TENT))).to.equal('Transcript of tent-pitch.');
      cut.blackHole();
      // The version read fails (its deadline): the answer held under the last version made is served.
      expect(transcriptOf(await cache.findBySku('acme', TENT)), 'a held answer').to.equal('Transcript of tent-pitch.');
      // Nothing held for this one: the database's failure is the answer.
      const error = await cache.findBySku('globex', parseSku('GLOBEX-ONLY')).then(() => undefined, (failure: unknown) => failure);
      expect(isStorageUnavailable(error), `not held: ${String(error)}`).to.equal(true);
    } finally {
      // The black-holed connections never answer a goodbye: the pool is closed without waiting for them.
      cut.restore();
      await Promise.race([alone.close(), cut.close()]);
    }
  });
});
