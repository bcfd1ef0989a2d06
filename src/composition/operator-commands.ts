import { announceImports } from '../adapters/cli/announced-imports.js';
import type { Config } from '../adapters/config/config.js';
import { databaseTls, redisTarget } from './deployment.js';
import { migrateToLatest } from '../adapters/mysql/migrate.js';
import { mysqlAdminStore } from '../adapters/mysql/mysql-admin-store.js';
import { MysqlApiKeyAdmin } from '../adapters/mysql/mysql-api-key-admin.js';
import { MysqlCatalogStore } from '../adapters/mysql/mysql-catalog-store.js';
import { MysqlCursorKeys } from '../adapters/mysql/mysql-cursor-keys.js';
import { primaryPosition } from '../adapters/mysql/gtid-position.js';
import { createMysqlDatabase } from '../adapters/mysql/mysql-database.js';
import { MysqlWebhookEndpoints } from '../adapters/mysql/mysql-webhook-endpoints.js';
import { MysqlWebhookOutbox } from '../adapters/mysql/mysql-webhook-outbox.js';
import { RedisChangeVersions } from '../adapters/redis/redis-change-versions.js';
import { TIMEOUTS } from '../adapters/timeouts.js';
import type { OperatorCommands } from '../application/catalog-import/operator-commands.js';
import { systemClock } from '../application/common/clock.js';
import { createContainer, nobodyToTell, TOKENS } from './container.js';

/**
 * The operator's commands on the database, through the same use cases the portal drives; with
 * Redis set (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES), every write is also announced to the running instances.
 */
export function openOperatorCommands(config: Config): Promise<OperatorCommands> {
  const { databaseUrl, cursorSecret, tls } = config.storage;
  if (databaseUrl === null) throw new Error('DATABASE_URL: is required for this command (mysql://user:pass@host:port/db)');
  const db = createMysqlDatabase(databaseUrl, { ...TIMEOUTS.operatorDatabase, tls: databaseTls(tls) });
  const redis = redisTarget(config.redis);
  // Each change's tokens carry the primary's position after it, for instances that read replicas.
  const versions = redis === null ? null : new RedisChangeVersions({ target: redis, position: () => primaryPosition(db) });
  const announcer = versions ?? nobodyToTell;
  const container = createContainer({
    admin: { keys: new MysqlApiKeyAdmin(db), ...mysqlAdminStore(db), announcer, clock: systemClock },
    // The instances' cursor key, so an import's webhook messages carry cursors the feed takes.
    catalog: { store: new MysqlCatalogStore(db), cursorKeys: new MysqlCursorKeys(db, { secret: cursorSecret }) },
    webhooks: { endpoints: new MysqlWebhookEndpoints(db), outbox: new MysqlWebhookOutbox(db), allowPrivateTargets: config.webhooks.allowPrivateTargets },
  });
  const { issueKey, revokeKey, listKeys } = container.get(TOKENS.PortalUseCases);
  const commands: OperatorCommands = {
    migrate: () => migrateToLatest(db),
    importCatalog: (pieces, announce, progress, trace) => container.get(TOKENS.ImportCatalog).execute(pieces, announce, progress, trace),
    issueKey: async (partnerId, mode, label) => {
      const { issued, announceFailure } = await issueKey.execute({ partnerId, mode, label, actor: null });
      if (announceFailure !== null) {
        process.stderr.write(`warning: key ${issued.id} is issued, but the running instances could not be told through Redis (${announceFailure}): ` +
          'it may be refused for up to CACHE_TTL_MS, until each instance re-reads its keys\n');
      }
      return issued;
    },
    revokeKey: (keyId) => revokeKey.execute({ partnerId: null, keyId, actor: null }),
    listKeys: async (partnerId) => (await listKeys.execute({ partnerId }))
      .map((key) => ({ id: key.id, mode: key.mode, label: key.label, created_at: key.createdAt, revoked_at: key.revokedAt })),
    inviteAdmin: (partnerId, email) => container.get(TOKENS.InviteAdmin).execute({ partnerId, email }),
    webhooks: container.get(TOKENS.WebhookUseCases),
    announcesChanges: versions !== null,
    close: () => db.destroy(),
  };
  if (versions === null) return Promise.resolve(commands);
  return Promise.resolve({
    ...announceImports(commands, versions),
    close: async () => {
      await versions.close();
      await commands.close();
    },
  });
}
