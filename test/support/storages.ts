import { Redis } from 'ioredis';
import { TOKENS, type Infrastructure } from '../../src/composition/container.js';
import type { Deployment } from '../../src/composition/deployment.js';
import type { KeyMode } from '../../src/domain/api-key.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';
import { openMemoryDeployment, openTestDeployment } from './deployments.js';
import { importCatalog } from './import.js';
import { useTestDatabase } from './mariadb.js';
import { startRedisServer, type RedisServerProcess } from './redis.js';

/** The fixture behind one storage, fresh for one test, with a way to revoke a key as an operator would. */
export interface OpenedStorage {
  readonly infrastructure: Omit<Infrastructure, 'logger'>;
  /** Revokes through the use case the CLI and the portal run, announced to the instances where there are others. */
  revoke(keyId: string): Promise<void>;
  /** Issues a key through the same use case: its id and the key, shown this once. */
  issue(partnerId: string, mode: KeyMode): Promise<{ id: string; key: string }>;
  /** Undoes what a test changed, so the next test starts from the fixture, and closes this opening. */
  reset(): Promise<void>;
}

/** Called inside a `describe`: registers the storage's hooks and returns how to open it per test. */
export type StorageSetup = () => { open(): Promise<OpenedStorage> };

/** Each opening is a deployment of the composition root; whatever a test left open is closed after the suite. */
function openings(open: () => Promise<Deployment>, restore: (deployment: Deployment) => Promise<void>): { open(): Promise<OpenedStorage> } {
  const live = new Set<Deployment>();
  after(async function () {
    for (const deployment of live) await deployment.close();
  });
  return {
    open: async () => {
      const deployment = await open();
      live.add(deployment);
      return {
        // The server a test starts brings its own logger, to read what was logged.
        infrastructure: deployment.api,
        revoke: (keyId) => deployment.container.get(TOKENS.PortalUseCases).revokeKey.execute({ partnerId: null, keyId, actor: null }).then(() => undefined),
        issue: async (partnerId, mode) => (await deployment.container.get(TOKENS.PortalUseCases).issueKey.execute({ partnerId, mode, label: null, actor: null })).issued,
        reset: async () => {
          live.delete(deployment);
          await restore(deployment);
          await deployment.close();
        },
      };
    },
  };
}

const useMemory: StorageSetup = () => openings(() => openMemoryDeployment(), () => Promise.resolve());

/**
 * MySQL as production runs it, from the same settings: the fixture imported into a database of its
 * own, behind the response cache; with `redis`, counted in a redis-server of the suite's own, keys
 * and answers held in memory and kept current by the version tokens, as several instances run it.
 */
function useMysql(options: { redis: boolean }): StorageSetup {
  return () => {
    // First, so that its `after` closes the deployments before the database and Redis go.
    const opened = openings(() => openTestDeployment(settings()), async () => {
      const active = catalog.partners.flatMap((p) => p.apiKeys).filter((k) => !k.revoked).map((k) => k.id);
      await testDb.db.updateTable('api_keys').set({ revoked_at: null }).where('id', 'in', active).execute();
      // The next opening starts from no counts and no version tokens, as a new deployment would.
      if (redis !== undefined) await flush(redis.url);
    });
    const testDb = useTestDatabase();
    const catalog = fixtureCatalog();
    let redis: RedisServerProcess | undefined;
    before(async function () {
      await importCatalog(testDb.db, catalog);
      if (options.redis) redis = await startRedisServer();
    });
    after(async function () {
      await redis?.kill();
    });
    const settings = (): Record<string, string> => ({
      STORAGE: 'mysql', DATABASE_URL: testDb.url, ...(redis === undefined ? {} : { RATE_LIMIT_STORE: 'redis', REDIS_URL: redis.url }),
    });
    return opened;
  };
}

async function flush(url: string): Promise<void> {
  const client = new Redis(url);
  try {
    await client.flushall();
  } finally {
    client.disconnect();
  }
}

/** Every storage the HTTP suite runs on, each opened by the composition root from its settings. */
export const STORAGES: readonly [name: string, setup: StorageSetup][] = [
  ['memory', useMemory],
  ['mysql', useMysql({ redis: false })],
  ['mysql + redis', useMysql({ redis: true })],
];
