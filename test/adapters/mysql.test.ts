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
});
