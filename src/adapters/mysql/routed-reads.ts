import type { ChangesFeed, FeedPage } from '../../application/changes/changes-feed.js';
import type { ProductCatalog } from '../../application/lookup/product-catalog.js';
import type { Principal } from '../../domain/api-key.js';
import type { KeyChangesRead, LiveKeyRow } from '../../application/access/key-set-source.js';
import type { LookupAnswer } from '../../domain/lookup-answer.js';
import type { ProductId } from '../../domain/product-id.js';
import type { Sku } from '../../domain/sku.js';
import type { Kysely } from 'kysely';
import type { Database } from './database.js';
import type { MysqlApiKeyStore } from './mysql-api-key-store.js';
import type { MysqlChangesFeed } from './mysql-changes-feed.js';
import type { MysqlProductCatalog } from './mysql-product-catalog.js';
import type { ReplicaRouter } from './replica-reads.js';

/** The adapters that read, over one server: the primary's, and each replica's. */
export interface ReadPorts {
  readonly db: Kysely<Database>;
  readonly catalog: MysqlProductCatalog;
  readonly keys: MysqlApiKeyStore;
  readonly changes: MysqlChangesFeed;
}

/** Lookups and batches, each read where the router sends it. */
export class RoutedCatalog implements ProductCatalog {
  constructor(private readonly router: ReplicaRouter<ReadPorts>) {}

  findBySku(partnerId: string, sku: Sku): Promise<LookupAnswer | null> {
    return this.router.read(({ catalog }) => catalog.findBySku(partnerId, sku));
  }

  findById(partnerId: string, id: ProductId): Promise<LookupAnswer | null> {
    return this.router.read(({ catalog }) => catalog.findById(partnerId, id));
  }

  findManyBySku(partnerId: string, skus: readonly Sku[]): Promise<(LookupAnswer | null)[]> {
    return this.router.read(({ catalog }) => catalog.findManyBySku(partnerId, skus));
  }

  findManyById(partnerId: string, ids: readonly ProductId[]): Promise<(LookupAnswer | null)[]> {
    return this.router.read(({ catalog }) => catalog.findManyById(partnerId, ids));
  }
}

/** The key set, each read where the router sends it. */
export class RoutedKeys implements Pick<MysqlApiKeyStore, keyof MysqlApiKeyStore> {
  constructor(private readonly router: ReplicaRouter<ReadPorts>) {}

  findActiveByHash(sha256: string): Promise<Principal | null> {
    return this.router.read(({ keys }) => keys.findActiveByHash(sha256));
  }

  /** Read from the database on this very request: nothing newer can have been learned since. */
  isStillActive(): Promise<boolean> {
    return Promise.resolve(true);
  }

  isLive(principal: Principal): Promise<boolean> {
    return this.router.read(({ keys }) => keys.isLive(principal));
  }

  /** Every page on one server: a read that starts over on the primary starts its pages over too. */
  readLiveKeys(open: () => (page: readonly LiveKeyRow[]) => void): Promise<number> {
    return this.router.read(({ keys }) => keys.readLiveKeys(open));
  }

  /** The counter and the rows on one server, so the rows hold every change up to the counter read. */
  keysChangedAfter(after: number): Promise<KeyChangesRead> {
    return this.router.read(({ keys }) => keys.keysChangedAfter(after));
  }
}

/** The changes feed, each page read where the router sends it. */
export class RoutedChanges implements ChangesFeed {
  constructor(private readonly router: ReplicaRouter<ReadPorts>) {}

  read(partnerId: string, afterSeq: number, limit: number): Promise<FeedPage> {
    return this.router.read(({ changes }) => changes.read(partnerId, afterSeq, limit));
  }
}
