import { readCatalogFile } from './adapters/catalog-file/catalog-file.js';
import { catalogFilePieces } from './adapters/catalog-file/catalog-pieces.js';
import { ImportCatalog } from './application/import-catalog.js';
import { systemClock } from './application/ports/clock.js';
import { loadDotEnv, readConfig } from './adapters/config/config.js';
import type { OperatorStore } from './application/ports/operator-store.js';
import { TIMEOUTS } from './application/timeouts.js';
import { announcingStore } from './adapters/cli/announcing-store.js';
import { runCli } from './adapters/cli/run-command.js';
import { issueApiKey, listApiKeys, revokeApiKey } from './adapters/mysql/api-key-admin.js';
import { MysqlCatalogStore } from './adapters/mysql/mysql-catalog-store.js';
import { migrateToLatest } from './adapters/mysql/migrate.js';
import { createMysqlDatabase } from './adapters/mysql/mysql-database.js';
import { RedisChangeVersions } from './adapters/redis/redis-change-versions.js';
import { checkStructuredData } from './adapters/structured-data/google-rules.js';

/** The database; with REDIS_URL set, every write is also announced to the running instances. */
function openOperatorStore(): Promise<OperatorStore> {
  const { databaseUrl, redisUrl } = readConfig(process.env);
  if (databaseUrl === null) throw new Error('DATABASE_URL: is required for this command (mysql://user:pass@host:port/db)');
  const db = createMysqlDatabase(databaseUrl, TIMEOUTS.operatorDatabase);
  const store: OperatorStore = {
    migrate: () => migrateToLatest(db),
    importCatalog: (pieces) => new ImportCatalog(new MysqlCatalogStore(db), systemClock).execute(pieces),
    issueKey: (partnerId, label) => issueApiKey(db, partnerId, label),
    revokeKey: (keyId) => revokeApiKey(db, keyId),
    listKeys: (partnerId) => listApiKeys(db, partnerId),
    close: () => db.destroy(),
  };
  if (redisUrl === null) return Promise.resolve(store);
  const versions = new RedisChangeVersions({ url: redisUrl });
  const announcing = announcingStore(store, versions, (line) => process.stderr.write(`${line}\n`));
  return Promise.resolve({
    ...announcing,
    close: async () => {
      await versions.close();
      await store.close();
    },
  });
}

loadDotEnv();
process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  openStore: openOperatorStore,
  readCatalog: readCatalogFile,
  catalogPieces: catalogFilePieces,
  checkStructuredData,
});
