import { MysqlWebhookEndpoints } from './mysql-webhook-endpoints.js';
import { MysqlWebhookOutbox } from './mysql-webhook-outbox.js';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from './database.js';
import type { ChangesFeed } from '../../application/changes/changes-feed.js';
import type { CursorKeys } from '../../application/changes/cursor-keys.js';
import type { ProductCatalog } from '../../application/lookup/product-catalog.js';
import type { CatalogVersions } from '../../application/instances/catalog-versions.js';
import type { ReadinessProbe } from '../../application/common/readiness-probe.js';
import type { PoolUse } from './bounded-pool.js';
import { mysqlAdminStore, type MysqlAdminStore } from './mysql-admin-store.js';
import { MysqlApiKeyAdmin } from './mysql-api-key-admin.js';
import { MysqlApiKeyStore } from './mysql-api-key-store.js';
import { MysqlCatalogVersions } from './mysql-catalog-versions.js';
import { MysqlChangesFeed } from './mysql-changes-feed.js';
import { MysqlCursorKeys } from './mysql-cursor-keys.js';
import { openMeasuredMysqlDatabase, type MysqlDatabaseOptions } from './mysql-database.js';
import { databaseTarget } from './database-advice.js';
import { primaryPosition } from './gtid-position.js';
import { Replica, ReplicaRouter, type ReadPositions } from './replica-reads.js';
import { RoutedCatalog, RoutedChanges, RoutedKeys, type ReadPorts } from './routed-reads.js';
import { MysqlProductCatalog } from './mysql-product-catalog.js';
import { MysqlReadinessProbe } from './mysql-readiness-probe.js';

export interface MysqlStorage {
  readonly catalog: ProductCatalog;
  /** Each catalog's version, read on the primary: what an instance that cannot hear of changes through Redis goes by. */
  readonly catalogVersions: CatalogVersions;
  readonly changes: ChangesFeed;
  /** The key the deployment signs its cursors with, shared by every instance through the database. */
  readonly cursorKeys: CursorKeys;
  readonly keys: Pick<MysqlApiKeyStore, keyof MysqlApiKeyStore>;
  readonly readiness: ReadinessProbe;
  /** The partner portal's storage: keys as admins manage them, and accounts, sessions and the audit log. */
  readonly keyAdmin: MysqlApiKeyAdmin;
  readonly admins: MysqlAdminStore;
  /** Partners' webhook endpoints, and the outbox the instances deliver from. */
  readonly webhooks: { readonly endpoints: MysqlWebhookEndpoints; readonly outbox: MysqlWebhookOutbox };
  /** What the pool is doing now, for the metrics. */
  readonly poolUse: () => PoolUse;
  /** The primary's replication position now, carried by the tokens of the changes this instance announces. */
  readonly position: () => Promise<string>;
  /** With replicas: where reads went, and how far behind each replica is. */
  readonly replicas?: ReplicaRouter<ReadPorts>;
  close(): Promise<void>;
}

/** Read replicas (DATABASE_REPLICA_URLS), and what their reads must reach. */
export interface ReplicaOptions {
  readonly urls: readonly string[];
  /** DATABASE_REPLICA_WAIT_MS. */
  readonly waitMs: number;
  /** Fed by the changes seen (ChangesElsewhere). */
  readonly positions: ReadPositions;
  /** Whether changes are being seen now. */
  readonly isShared: () => boolean;
}

/**
 * The MySQL adapters for serving requests, over one pool with short timeouts to the primary, and
 * one to each replica. Lookups, batches, the key set and the changes feed read where a
 * ReplicaRouter sends them; everything that writes, and the portal, uses the primary. Opening does
 * not connect: a database that is down at start makes `/readyz` fail until it comes up.
 */
export function openMysqlStorage(options: { url: string; logger?: Logger; cursorSecret?: string | null; replicas?: ReplicaOptions } & MysqlDatabaseOptions): Promise<MysqlStorage> {
  const { db, poolUse } = openMeasuredMysqlDatabase(options.url, options);
  const { replicas: replicaOptions } = options;
  const router = replicaOptions === undefined || replicaOptions.urls.length === 0 ? undefined : replicaRouter(db, replicaOptions, options);
  const reads = router === undefined
    ? readPorts(db)
    : { catalog: new RoutedCatalog(router), changes: new RoutedChanges(router), keys: new RoutedKeys(router) };
  return Promise.resolve({
    catalog: reads.catalog,
    catalogVersions: new MysqlCatalogVersions(db),
    changes: reads.changes,
    cursorKeys: new MysqlCursorKeys(db, { secret: options.cursorSecret ?? null, ...(router === undefined ? {} : { read: (use) => router.read((ports) => use(ports.db)) }) }),
    webhooks: { endpoints: new MysqlWebhookEndpoints(db), outbox: new MysqlWebhookOutbox(db) },
    keys: reads.keys,
    readiness: new MysqlReadinessProbe(db, { logger: options.logger }),
    keyAdmin: new MysqlApiKeyAdmin(db),
    admins: mysqlAdminStore(db),
    poolUse,
    position: () => primaryPosition(db),
    ...(router === undefined ? {} : { replicas: router }),
    close: async () => {
      router?.close();
      await Promise.all([db, ...(router?.replicas ?? []).map((replica) => replica.db)].map((each) => each.destroy()));
    },
  });
}

/** The read adapters over one server. */
function readPorts(db: Kysely<Database>): ReadPorts {
  return { db, catalog: new MysqlProductCatalog(db), keys: new MysqlApiKeyStore(db), changes: new MysqlChangesFeed(db) };
}

/** A pool of the same size and timeouts on each replica, whose connections catch up before they are lent. */
function replicaRouter(primary: Kysely<Database>, replicas: ReplicaOptions, options: { logger?: Logger } & MysqlDatabaseOptions): ReplicaRouter<ReadPorts> {
  const each = replicas.urls.map((url, index) => {
    const target = databaseTarget(url);
    const name = target === null ? `replica ${index + 1}` : `${target.host}:${target.port}`;
    return new Replica(name, (catchUp) => openMeasuredMysqlDatabase(url, { ...options, catchUp }), readPorts, replicas.positions, replicas.waitMs);
  });
  return new ReplicaRouter({ db: primary, ports: readPorts(primary) }, each, replicas.positions, { isShared: replicas.isShared, logger: options.logger });
}
