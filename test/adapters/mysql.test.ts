import { expect } from 'chai';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/adapters/mysql/database.js';
import { importCatalog } from '../support/import.js';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { writeLegacyCatalog } from '../support/legacy-database.js';
import { MysqlApiKeyStore } from '../../src/adapters/mysql/mysql-api-key-store.js';
import { MysqlProductCatalog } from '../../src/adapters/mysql/mysql-product-catalog.js';
import { prepareQuery } from '../../src/adapters/mysql/prepared-query.js';
import type { Catalog } from '../../src/domain/catalog.js';
import { apiKeyStoreContract } from '../contracts/api-key-store.contract.js';
import { productCatalogContract } from '../contracts/product-catalog.contract.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';
import { useTestDatabase } from '../support/mariadb.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { statementsRun } from '../support/mysql-statements.js';
import { createMysqlDatabase } from '../../src/adapters/mysql/mysql-database.js';
import type { ProductId } from '../../src/domain/product-id.js';
import type { Sku } from '../../src/domain/sku.js';

/** Makes the database hold exactly this catalog: emptied, then imported. */
async function holdOnly(db: Kysely<Database>, catalog: Catalog): Promise<void> {
  for (const table of ['api_keys', 'pdp_entries', 'videos', 'products', 'partners'] as const) {
    await db.deleteFrom(table).execute();
  }
  await importCatalog(db, catalog);
}

const noop = (): Promise<void> => Promise.resolve();

describe('MySQL adapters', function () {
  const testDb = useTestDatabase();

  productCatalogContract('mysql', async (catalog) => {
    await holdOnly(testDb.db, catalog);
    return { catalog: new MysqlProductCatalog(testDb.db), close: noop };
  });

  describe('a database imported before answers were stored', function () {
    const legacyDb = useTestDatabase({ migrated: false });
    // Answers built in SQL by migration 0002, for rows imported before it, must be the same answers.
    productCatalogContract('mysql, answers back-filled by migration 0002', async (catalog) => {
      await writeLegacyCatalog(legacyDb.db, catalog);
      await migrateToLatest(legacyDb.db);
      return { catalog: new MysqlProductCatalog(legacyDb.db), close: noop };
    }, { searchFields: false });
  });

  apiKeyStoreContract('mysql', async (catalog) => {
    await holdOnly(testDb.db, catalog);
    return {
      store: new MysqlApiKeyStore(testDb.db),
      revoke: async (keyId) => {
        await testDb.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyId).execute();
      },
      close: noop,
    };
  });

  describe('a prepared query', function () {
    it('runs with each value in its own place, however the builder orders the parameters', async function () {
      await holdOnly(testDb.db, fixtureCatalog());
      // Built with the SKU first in the arguments but second in the SQL.
      const find = prepareQuery(
        testDb.db,
        (sku: string, partnerId: string) => testDb.db.selectFrom('products').select('sku').where('partner_id', '=', partnerId).where('sku', '=', sku),
        ['<sku>', '<partner>'],
      );
      expect(await find('TENT-2P', 'acme')).to.deep.equal([{ sku: 'TENT-2P' }]);
      expect(await find('TENT-2P', 'nobody')).to.deep.equal([]);
    });

    it('refuses, when built, a placeholder that does not appear exactly once', function () {
      const twice = () => prepareQuery(
        testDb.db,
        (sku: string) => testDb.db.selectFrom('products').select('id').where('sku', '=', sku).where('partner_id', '=', sku),
        ['<sku>'],
      );
      expect(twice).to.throw(/each placeholder must appear once/);
      // A value derived from the placeholder is bound in its stead: the real value would never reach the SQL.
      const derived = () => prepareQuery(
        testDb.db,
        (sku: string) => testDb.db.selectFrom('products').select('id').where('sku', '=', sku.toUpperCase()),
        ['<sku>'],
      );
      expect(derived).to.throw(/each placeholder must appear once/);
    });
  });

  describe('single lookups asked for in the same turn of the event loop', function () {
    let proxy: TcpProxy | undefined;
    let db: Kysely<Database> | undefined;

    beforeEach(async function () {
      await holdOnly(testDb.db, fixtureCatalog());
      const target = new URL(testDb.url);
      proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, { capture: true });
      const url = new URL(testDb.url);
      url.port = String(proxy.port);
      db = createMysqlDatabase(url.toString());
    });
    afterEach(async function () {
      await db?.destroy();
      await proxy?.close();
    });

    const sku = (value: string): Sku => value as Sku;
    const titleOf = async (found: Promise<{ result: { product: { title: string } } } | null>): Promise<string | null> => (await found)?.result.product.title ?? null;

    it('are read at once while nothing is in flight, then together, one statement for each partner, each answered with its own product', async function () {
      const catalog = new MysqlProductCatalog(db!);
      const tentId = (await catalog.findBySku('acme', sku('TENT-2P')))!.result.product.id as ProductId;
      const before = statementsRun(proxy!);
      const titles = await Promise.all([
        titleOf(catalog.findBySku('acme', sku('TENT-2P'))),
        titleOf(catalog.findBySku('acme', sku('abc-1'))),
        titleOf(catalog.findBySku('acme', sku('ABC-1'))),
        titleOf(catalog.findBySku('acme', sku('SHARED-1'))),
        titleOf(catalog.findBySku('acme', sku('NO-SUCH-SKU'))),
        titleOf(catalog.findBySku('acme', sku('GLOBEX-ONLY'))),
        titleOf(catalog.findBySku('acme', sku('TENT-2P'))),
        titleOf(catalog.findBySku('globex', sku('SHARED-1'))),
        titleOf(catalog.findBySku('globex', sku('TENT-2P'))),
        titleOf(catalog.findById('acme', tentId)),
        titleOf(catalog.findById('globex', tentId)),
      ]);
      const tent = await titleOf(catalog.findBySku('acme', sku('TENT-2P')));
      const abc = await titleOf(catalog.findBySku('acme', sku('abc-1')));
      expect(titles).to.deep.equal([tent, abc, 'Upper-case ABC', 'Acme shared', null, null, tent, 'Globex shared', null, tent, null]);
      // The first by SKU and the first by ID alone, nothing being in flight; then by SKU one for
      // acme's other six distinct SKUs and one for globex's two, and by ID one for globex's.
      expect(statementsRun(proxy!) - before - 2, 'statements for the lookups of the turn').to.equal(5);
    });

    it('are read in statements of at most 8, however many a turn gathered', async function () {
      const catalog = new MysqlProductCatalog(db!);
      await catalog.findBySku('acme', sku('TENT-2P'));
      const before = statementsRun(proxy!);
      // 20 distinct SKUs, one of them known: the first alone, then the other 19 in three statements.
      const found = await Promise.all(Array.from({ length: 20 }, (_, i) => titleOf(catalog.findBySku('acme', sku(i === 13 ? 'ABC-1' : `NONE-${i}`)))));
      expect(found.filter((title) => title !== null)).to.deep.equal(['Upper-case ABC']);
      expect(found[13]).to.equal('Upper-case ABC');
      expect(statementsRun(proxy!) - before).to.equal(4);
    });

    it('fail alone when their own product cannot be answered', async function () {
      const catalog = new MysqlProductCatalog(db!);
      const tentId = (await catalog.findBySku('acme', sku('TENT-2P')))!.result.product.id;
      await testDb.db.deleteFrom('product_lookups').where('product_id', '=', tentId).execute();
      const [tent, shared] = await Promise.allSettled([catalog.findBySku('acme', sku('TENT-2P')), titleOf(catalog.findBySku('acme', sku('SHARED-1')))]);
      expect(tent.status).to.equal('rejected');
      expect(String((tent as PromiseRejectedResult).reason)).to.match(/no stored lookup answer/);
      expect(shared).to.deep.equal({ status: 'fulfilled', value: 'Acme shared' });
    });
  });
});
