import { expect } from 'chai';
import { sql } from 'kysely';
import { MemoryCatalogStore } from '../../src/adapters/memory/memory-catalog-store.js';
import { MemoryWebhookEndpoints } from '../../src/adapters/memory/memory-webhook-endpoints.js';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { migrationsFrom } from '../support/migrations.js';
import { mysqlAdminStore } from '../../src/adapters/mysql/mysql-admin-store.js';
import { MysqlWebhookEndpoints } from '../../src/adapters/mysql/mysql-webhook-endpoints.js';
import { fixtureCatalog, fixtureDocument } from '../fixtures/catalog-fixture.js';
import { webhookEndpointStoreContract } from '../contracts/webhook-endpoint-store.contract.js';
import { importCatalog, importDocument } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';

describe('webhook endpoint storage', function () {
  describe('in memory', function () {
    webhookEndpointStoreContract('memory', async () => {
      const store = new MemoryCatalogStore();
      await importDocument(store, fixtureDocument());
      return new MemoryWebhookEndpoints(store);
    });
  });

  describe('on MySQL', function () {
    const testDb = useTestDatabase();

    before(async function () {
      await importCatalog(testDb.db, fixtureCatalog());
    });

    webhookEndpointStoreContract('mysql', async () => {
      await testDb.db.deleteFrom('webhook_endpoints').execute();
      return new MysqlWebhookEndpoints(testDb.db);
    });

    it('keeps an audit event\'s endpoint, and none on events about no endpoint', async function () {
      const { audit } = mysqlAdminStore(testDb.db);
      const at = new Date(Date.UTC(2026, 0, 5, 9, 0, 0));
      await audit.record({ at, partnerId: 'acme', adminEmail: null, action: 'webhook.created', keyId: null, endpointId: 'whep_0000000000000001' });
      await audit.record({ at, partnerId: 'acme', adminEmail: 'ada@acme.example', action: 'key.created', keyId: 'acme-k1' });
      expect(await audit.list('acme', 2)).to.deep.equal([
        { at, partnerId: 'acme', adminEmail: 'ada@acme.example', action: 'key.created', keyId: 'acme-k1' },
        { at, partnerId: 'acme', adminEmail: null, action: 'webhook.created', keyId: null, endpointId: 'whep_0000000000000001' },
      ]);
    });

    it('migration 0010 runs again over its own tables and columns', async function () {
      // Kysely runs migrations in order only: the ones after 0010 are forgotten with it, and run again too.
      await sql`delete from kysely_migration where name >= '0010_webhook_endpoints'`.execute(testDb.db);
      expect(await migrateToLatest(testDb.db)).to.deep.equal(await migrationsFrom('0010_webhook_endpoints'));
    });
  });
});
