import { withResponseCache } from '../../src/adapters/cache/cached-product-catalog.js';
import { importCatalog } from './import.js';
import { MysqlApiKeyStore } from '../../src/adapters/mysql/mysql-api-key-store.js';
import { MysqlChangesFeed } from '../../src/adapters/mysql/mysql-changes-feed.js';
import { MysqlProductCatalog } from '../../src/adapters/mysql/mysql-product-catalog.js';
import { MysqlReadinessProbe } from '../../src/adapters/mysql/mysql-readiness-probe.js';
import type { Infrastructure } from '../../src/container.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';
import { useTestDatabase } from './mariadb.js';
import { memoryInfrastructure } from './test-server.js';

/** The fixture behind one storage, fresh for one test, with a way to revoke a key as an operator would. */
export interface OpenedStorage {
  readonly infrastructure: Omit<Infrastructure, 'logger'>;
  revoke(keyId: string): Promise<void>;
  /** Undoes what a test changed, so the next test starts from the fixture. */
  reset(): Promise<void>;
}

/** Called inside a `describe`: registers the storage's hooks and returns how to open it per test. */
export type StorageSetup = () => { open(): Promise<OpenedStorage> };

const useMemory: StorageSetup = () => ({
  open: () => {
    const infrastructure = memoryInfrastructure();
    return Promise.resolve({
      infrastructure,
      revoke: (keyId) => {
        infrastructure.keys.revoke(keyId);
        return Promise.resolve();
      },
      reset: () => Promise.resolve(),
    });
  },
});

/** MySQL as production runs it: the fixture imported into a database of its own, behind the response cache. */
const useMysql: StorageSetup = () => {
  const testDb = useTestDatabase();
  const catalog = fixtureCatalog();
  before(async function () {
    await importCatalog(testDb.db, catalog);
  });
  return {
    open: () => {
      const { db } = testDb;
      return Promise.resolve({
        infrastructure: {
          ...memoryInfrastructure(),
          catalog: withResponseCache(new MysqlProductCatalog(db), { ttlMs: 30_000 }),
          changes: new MysqlChangesFeed(db),
          keys: new MysqlApiKeyStore(db),
          readiness: new MysqlReadinessProbe(db),
        },
        revoke: async (keyId) => {
          await db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyId).execute();
        },
        reset: async () => {
          const active = catalog.partners.flatMap((p) => p.apiKeys).filter((k) => !k.revoked).map((k) => k.id);
          await db.updateTable('api_keys').set({ revoked_at: null }).where('id', 'in', active).execute();
        },
      });
    },
  };
};

/** Every storage the HTTP suite runs on. */
export const STORAGES: readonly [name: string, setup: StorageSetup][] = [['memory', useMemory], ['mysql', useMysql]];
