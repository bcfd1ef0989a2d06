import type { Kysely } from 'kysely';
import type { Database } from '../../src/adapters/mysql/database.js';
import { importCatalog } from '../../src/adapters/mysql/import-catalog.js';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { MysqlApiKeyStore } from '../../src/adapters/mysql/mysql-api-key-store.js';
import { createMysqlDatabase } from '../../src/adapters/mysql/mysql-database.js';
import { MysqlProductCatalog } from '../../src/adapters/mysql/mysql-product-catalog.js';
import type { Catalog } from '../../src/domain/catalog.js';
import { apiKeyStoreContract } from '../contracts/api-key-store.contract.js';
import { productCatalogContract } from '../contracts/product-catalog.contract.js';
import { useTestDatabase } from '../support/mariadb.js';

/** A database holding exactly this catalog: emptied, then imported. */
async function databaseWith(url: string, catalog: Catalog): Promise<Kysely<Database>> {
  const db = createMysqlDatabase(url);
  for (const table of ['api_keys', 'pdp_entries', 'videos', 'products', 'partners'] as const) {
    await db.deleteFrom(table).execute();
  }
  await importCatalog(db, catalog);
  return db;
}

describe('MySQL adapters', function () {
  const testDb = useTestDatabase();

  before(async function () {
    const db = createMysqlDatabase(testDb.url);
    await migrateToLatest(db);
    await db.destroy();
  });

  productCatalogContract('mysql', async (catalog) => {
    const db = await databaseWith(testDb.url, catalog);
    return { catalog: new MysqlProductCatalog(db), close: () => db.destroy() };
  });

  apiKeyStoreContract('mysql', async (catalog) => {
    const db = await databaseWith(testDb.url, catalog);
    return {
      store: new MysqlApiKeyStore(db),
      revoke: async (keyId) => {
        await db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyId).execute();
      },
      close: () => db.destroy(),
    };
  });
});
