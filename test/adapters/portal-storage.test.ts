import { sql } from 'kysely';
import { MemoryApiKeyAdmin } from '../../src/adapters/memory/memory-api-key-admin.js';
import { memoryAdminStore } from '../../src/adapters/memory/memory-admin-store.js';
import { MemoryCatalogStore } from '../../src/adapters/memory/memory-catalog-store.js';
import { mysqlAdminStore } from '../../src/adapters/mysql/mysql-admin-store.js';
import { MysqlApiKeyAdmin } from '../../src/adapters/mysql/mysql-api-key-admin.js';
import { MysqlApiKeyStore } from '../../src/adapters/mysql/mysql-api-key-store.js';
import { fixtureCatalog, fixtureDocument } from '../fixtures/catalog-fixture.js';
import { adminStoreContract } from '../contracts/admin-store.contract.js';
import { apiKeyAdminContract } from '../contracts/api-key-admin.contract.js';
import { importCatalog, importDocument } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';

describe('the portal\'s storage', function () {
  describe('in memory', function () {
    apiKeyAdminContract('memory', async () => {
      const store = new MemoryCatalogStore();
      await importDocument(store, fixtureDocument());
      return { admin: new MemoryApiKeyAdmin(store), keys: store };
    });
    adminStoreContract('memory', () => Promise.resolve(memoryAdminStore()), { floodFailures: 52_500 });
  });

  describe('on MySQL', function () {
    const testDb = useTestDatabase();
    const PORTAL_TABLES = ['audit_events', 'admin_sign_in_locks', 'admin_sign_in_failures', 'admin_sessions', 'admin_invitations', 'partner_admins'] as const;

    before(async function () {
      await importCatalog(testDb.db, fixtureCatalog());
    });
    /** The fixture's partners and keys, and nothing the last test added. */
    async function fresh(): Promise<void> {
      for (const table of PORTAL_TABLES) await testDb.db.deleteFrom(table).execute();
      await testDb.db.deleteFrom('api_keys').where('origin', '=', 'cli').execute();
      await sql`update api_keys set last_used_at = null`.execute(testDb.db);
    }

    apiKeyAdminContract('mysql', async () => {
      await fresh();
      return { admin: new MysqlApiKeyAdmin(testDb.db), keys: new MysqlApiKeyStore(testDb.db) };
    });
    adminStoreContract('mysql', async () => {
      await fresh();
      return mysqlAdminStore(testDb.db);
    }, { floodFailures: 5_000 });
  });
});
