import { MysqlWebhookEndpoints } from './mysql-webhook-endpoints.js';
import { MysqlWebhookOutbox } from './mysql-webhook-outbox.js';
import type { Logger } from 'pino';
import type { ChangesFeed } from '../../application/changes/changes-feed.js';
import type { CursorKeys } from '../../application/changes/cursor-keys.js';
import type { ProductCatalog } from '../../application/lookup/product-catalog.js';
import type { ReadinessProbe } from '../../application/common/readiness-probe.js';
import type { PoolUse } from './bounded-pool.js';
import { mysqlAdminStore, type MysqlAdminStore } from './mysql-admin-store.js';
import { MysqlApiKeyAdmin } from './mysql-api-key-admin.js';
import { MysqlApiKeyStore } from './mysql-api-key-store.js';
import { MysqlChangesFeed } from './mysql-changes-feed.js';
import { MysqlCursorKeys } from './mysql-cursor-keys.js';
import { openMeasuredMysqlDatabase, type MysqlDatabaseOptions } from './mysql-database.js';
import { MysqlProductCatalog } from './mysql-product-catalog.js';
import { MysqlReadinessProbe } from './mysql-readiness-probe.js';

export interface MysqlStorage {
  readonly catalog: ProductCatalog;
  readonly changes: ChangesFeed;
  /** The key the deployment signs its cursors with, shared by every instance through the database. */
  readonly cursorKeys: CursorKeys;
  readonly keys: MysqlApiKeyStore;
  readonly readiness: ReadinessProbe;
  /** The partner portal's storage: keys as admins manage them, and accounts, sessions and the audit log. */
  readonly keyAdmin: MysqlApiKeyAdmin;
  readonly admins: MysqlAdminStore;
  /** Partners' webhook endpoints, and the outbox the instances deliver from. */
  readonly webhooks: { readonly endpoints: MysqlWebhookEndpoints; readonly outbox: MysqlWebhookOutbox };
  /** What the pool is doing now, for the metrics. */
  readonly poolUse: () => PoolUse;
  close(): Promise<void>;
}

/**
 * The MySQL adapters for serving requests, over one pool with short timeouts. Opening does
 * not connect: a database that is down at start makes `/readyz` fail until it comes up.
 */
export function openMysqlStorage(options: { url: string; logger?: Logger; cursorSecret?: string | null } & MysqlDatabaseOptions): Promise<MysqlStorage> {
  const { db, poolUse } = openMeasuredMysqlDatabase(options.url, options);
  return Promise.resolve({
    catalog: new MysqlProductCatalog(db),
    changes: new MysqlChangesFeed(db),
    cursorKeys: new MysqlCursorKeys(db, { secret: options.cursorSecret ?? null }),
    webhooks: { endpoints: new MysqlWebhookEndpoints(db), outbox: new MysqlWebhookOutbox(db) },
    keys: new MysqlApiKeyStore(db),
    readiness: new MysqlReadinessProbe(db, { logger: options.logger }),
    keyAdmin: new MysqlApiKeyAdmin(db),
    admins: mysqlAdminStore(db),
    poolUse,
    close: () => db.destroy(),
  });
}
