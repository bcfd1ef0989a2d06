import { expect } from 'chai';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/adapters/mysql/database.js';
import { importCatalog } from '../../src/adapters/mysql/import-catalog.js';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { MysqlApiKeyStore } from '../../src/adapters/mysql/mysql-api-key-store.js';
import { MysqlProductCatalog } from '../../src/adapters/mysql/mysql-product-catalog.js';
import type { Catalog } from '../../src/domain/catalog.js';
import { apiKeyStoreContract } from '../contracts/api-key-store.contract.js';
import { productCatalogContract } from '../contracts/product-catalog.contract.js';
import { useTestDatabase } from '../support/mariadb.js';

/** Makes the database hold exactly this catalog: emptied, then imported. */
async function holdOnly(db: Kysely<Database>, catalog: Catalog): Promise<void> {
  for (const table of ['api_keys', 'pdp_entries', 'videos', 'products', 'partners'] as const) {
    await db.deleteFrom(table).execute();
  }
  await importCatalog(db, catalog);
}

/** Turns the database back into one imported before migration 0002, then migrates it. */
async function backfillByMigration(db: Kysely<Database>): Promise<void> {
  await sql`drop table product_lookups`.execute(db);
  await sql`delete from kysely_migration where name = '0002_product_lookup_document'`.execute(db);
  expect(await migrateToLatest(db)).to.deep.equal(['0002_product_lookup_document']);
}

const noop = (): Promise<void> => Promise.resolve();

describe('MySQL adapters', function () {
  const testDb = useTestDatabase();

  productCatalogContract('mysql', async (catalog) => {
    await holdOnly(testDb.db, catalog);
    return { catalog: new MysqlProductCatalog(testDb.db), close: noop };
  });

  // Answers built in SQL by the migration, for rows imported before it, must be the same answers.
  productCatalogContract('mysql, answers back-filled by migration 0002', async (catalog) => {
    await holdOnly(testDb.db, catalog);
    await backfillByMigration(testDb.db);
    return { catalog: new MysqlProductCatalog(testDb.db), close: noop };
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
});
