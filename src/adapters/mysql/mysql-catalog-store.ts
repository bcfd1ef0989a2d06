import { sql, type Kysely, type Transaction } from 'kysely';
import type { CatalogImportSession, CatalogStore, StoredApiKey, StoredCatalog, StoredLookup, StoredPdpEntry, StoredProduct, StoredVideo } from '../../application/catalog-import/catalog-store.js';
import type { KeyMode } from '../../domain/api-key.js';
import type { OutboxMessage } from '../../application/webhooks/webhook-outbox.js';
import { TIMEOUTS } from '../timeouts.js';
import { batches } from './batches.js';
import type { Database } from './database.js';
import { checkPacketSize } from './packet-size.js';
import { deleteByIds, upsertRows } from './upsert.js';
import { nextKeyChange } from './key-change-sequence.js';
import { enabledEndpointIds, insertOutboxMessage } from './mysql-webhook-outbox.js';

/**
 * The import lock's name, for the database the connection uses: MariaDB's named locks are
 * server-wide, so imports into two databases on one server must not share one name (a hash keeps
 * the name within the 64 characters a lock name may have, whatever the database's name).
 */
export const IMPORT_LOCK = sql<string>`concat('pcat_import:', left(sha2(database(), 256), 48))`;

/** Values per `in (...)` list: keeps each statement small whatever the batch. */
const IN_LIST = 1_000;
/** Catalog ids per read of stored catalogs: an import reads those of thousands of small partners at a time, and each costs a statement. */
const CATALOGS_PER_READ = 5_000;

/** An import on MySQL is one transaction, and imports into one database take turns on a named lock. */
export class MysqlCatalogStore implements CatalogStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Refused at once if the server's packet cannot take a product's answer at its bound. */
  importing<T>(work: (session: CatalogImportSession) => Promise<T>): Promise<T> {
    // A second import waits for the first to commit, then reads what it wrote.
    // The lock is held on the transaction's own connection until after the commit.
    return this.db.connection().execute(async (connection) => {
      await checkPacketSize(connection);
      const { rows } = await sql<{ acquired: number | null }>`select get_lock(${IMPORT_LOCK}, ${TIMEOUTS.importLockWaitS}) as acquired`.execute(connection);
      if (rows[0]?.acquired !== 1) throw new Error(`another import has been running for over ${TIMEOUTS.importLockWaitS} s; try again later`);
      try {
        return await connection.transaction().execute((trx) => work(new MysqlImportSession(trx)));
      } finally {
        await sql`select release_lock(${IMPORT_LOCK})`.execute(connection);
      }
    });
  }
}

/** Runs `read` over `values` a list at a time and joins the rows. */
async function inLists<V, R>(values: readonly V[], read: (list: V[]) => Promise<R[]>): Promise<R[]> {
  const rows: R[] = [];
  for (const list of batches(values, () => 1, IN_LIST)) rows.push(...await read(list));
  return rows;
}

class MysqlImportSession implements CatalogImportSession {
  /** Each partner's feed position as this import has moved it. */
  private readonly feedPositions = new Map<string, number>();
  /** Whether each partner has tombstones, once known: most imports need not look for one per product. */
  private readonly tombstoned = new Map<string, boolean>();
  private keyChangeNumber: number | undefined;

  constructor(private readonly trx: Transaction<Database>) {}

  /** Learns with them each catalog's feed position and whether it has tombstones, which a catalog written later would read on its own. */
  async catalogs(catalogIds: readonly string[], tombstonesBefore: Date): Promise<StoredCatalog[]> {
    const catalogs: StoredCatalog[] = [];
    for (const list of batches(catalogIds, () => 1, CATALOGS_PER_READ)) {
      const rows = await this.trx
        .selectFrom('partners')
        .select((eb) => {
          const tombstones = () => eb.selectFrom('product_tombstones').select('product_tombstones.seq').whereRef('product_tombstones.partner_id', '=', 'partners.id');
          return ['partners.id', 'partners.name', 'partners.source_hash', 'partners.feed_seq',
            eb.exists(tombstones()).as('tombstoned'), eb.exists(tombstones().where('product_tombstones.deleted_at', '<', tombstonesBefore)).as('expired')];
        })
        .where('partners.id', 'in', list)
        .execute();
      for (const row of rows) {
        if (!this.feedPositions.has(row.id)) this.feedPositions.set(row.id, row.feed_seq);
        if (!this.tombstoned.has(row.id)) this.tombstoned.set(row.id, Number(row.tombstoned) === 1);
        catalogs.push({ id: row.id, name: row.name, sourceHash: row.source_hash, expiredTombstones: Number(row.expired) === 1 });
      }
    }
    return catalogs;
  }

  savePartner(partnerId: string, name: string): Promise<void> {
    return upsertRows(this.trx, 'partners', [{ id: partnerId, name }], ['name']);
  }

  async saveSourceHashes(rows: readonly { catalogId: string; sourceHash: string | null }[]): Promise<void> {
    for (const list of batches(rows, () => 1, IN_LIST)) {
      const hashes = sql<string | null>`case partners.id ${sql.join(list.map((row) => sql`when ${row.catalogId} then ${row.sourceHash}`), sql` `)} end`;
      await this.trx.updateTable('partners').set({ source_hash: hashes }).where('partners.id', 'in', list.map((row) => row.catalogId)).execute();
    }
  }

  products(partnerId: string, skus: readonly string[]): Promise<StoredProduct[]> {
    return inLists(skus, async (list) => (await this.trx
      .selectFrom('products')
      .leftJoin('product_lookups', 'product_lookups.product_id', 'products.id')
      .select(['products.id', 'products.sku', 'products.content_hash', 'product_lookups.lookup_hash', 'product_lookups.etag'])
      .where('products.partner_id', '=', partnerId)
      .where('products.sku', 'in', list)
      .execute()).map((row) => ({ id: row.id, sku: row.sku, contentHash: row.content_hash, lookupHash: row.lookup_hash, etag: row.etag })));
  }

  saveProducts(partnerId: string, rows: readonly { sku: string; contentHash: string }[]): Promise<void> {
    return upsertRows(this.trx, 'products', rows.map((row) => ({ partner_id: partnerId, sku: row.sku, content_hash: row.contentHash })), ['content_hash']);
  }

  videos(partnerId: string, refs: readonly string[]): Promise<StoredVideo[]> {
    return inLists(refs, async (list) => (await this.trx
      .selectFrom('videos')
      .select(['id', 'ref', 'content_hash'])
      .where('partner_id', '=', partnerId)
      .where('ref', 'in', list)
      .execute()).map((row) => ({ id: row.id, ref: row.ref, contentHash: row.content_hash })));
  }

  saveVideos(partnerId: string, rows: readonly { ref: string; productId: number; contentHash: string }[]): Promise<void> {
    return upsertRows(this.trx, 'videos', rows.map((row) => ({
      partner_id: partnerId, ref: row.ref, product_id: row.productId, content_hash: row.contentHash,
    })), ['product_id', 'content_hash']);
  }

  pdpEntries(productIds: readonly number[]): Promise<StoredPdpEntry[]> {
    return inLists(productIds, async (list) => (await this.trx
      .selectFrom('pdp_entries')
      .select(['id', 'product_id', 'pdp_url_hash', 'content_hash', 'json_ld_hash'])
      .where('product_id', 'in', list)
      .execute()).map((row) => ({
      id: row.id, productId: row.product_id, urlHash: row.pdp_url_hash, contentHash: row.content_hash, jsonLdHash: row.json_ld_hash,
    })));
  }

  savePdpEntries(rows: readonly Omit<StoredPdpEntry, 'id'>[]): Promise<void> {
    return upsertRows(this.trx, 'pdp_entries', rows.map((row) => ({
      product_id: row.productId, pdp_url_hash: row.urlHash, content_hash: row.contentHash, json_ld_hash: row.jsonLdHash,
    })), ['content_hash', 'json_ld_hash']);
  }

  deletePdpEntries(ids: readonly number[]): Promise<void> {
    return deleteByIds(this.trx, 'pdp_entries', ids);
  }

  async saveLookups(partnerId: string, rows: readonly StoredLookup[], at: Date): Promise<void> {
    const changed = rows.filter((row) => row.changed);
    if (changed.length > 0) {
      let seq = await this.feedPosition(partnerId);
      // Listing a change is writing the answer with its new position: no row of its own.
      await upsertRows(this.trx, 'product_lookups', changed.map((row) => ({
        product_id: row.productId, lookup_hash: row.lookupHash, lookup: row.lookupText, etag: row.etag,
        partner_id: partnerId, feed_seq: (seq += 1), changed_at: at,
      })), ['lookup_hash', 'lookup', 'etag', 'feed_seq', 'changed_at']);
      await this.moveFeed(partnerId, seq);
      // A product listed again after its deletion leaves the tombstones, so the feed holds it once.
      if (this.tombstoned.get(partnerId) ?? await this.hasTombstones(partnerId)) {
        await inLists(changed.map((row) => row.sku), async (list) => {
          await this.trx.deleteFrom('product_tombstones').where('partner_id', '=', partnerId).where('sku', 'in', list).execute();
          return [];
        });
      }
    }
    const unchanged = rows.filter((row) => !row.changed);
    // An answer rebuilt with the same ETag is one already stored, and it keeps its feed position:
    // the insert's position is never used.
    if (unchanged.length > 0) {
      await upsertRows(this.trx, 'product_lookups', unchanged.map((row) => ({
        product_id: row.productId, lookup_hash: row.lookupHash, lookup: row.lookupText, etag: row.etag,
        partner_id: partnerId, feed_seq: 0, changed_at: at,
      })), ['lookup_hash', 'lookup', 'etag']);
    }
  }

  enabledWebhookEndpoints(partnerId: string): Promise<string[]> {
    return enabledEndpointIds(this.trx, partnerId);
  }

  /** In the import's transaction: they commit with it, or roll back with it. */
  async queueWebhookMessages(messages: readonly OutboxMessage[]): Promise<void> {
    for (const message of messages) await insertOutboxMessage(this.trx, message);
  }

  /** The partner's feed position as this import has moved it; read once, as imports take turns (the lock). */
  async feedPosition(partnerId: string): Promise<number> {
    const known = this.feedPositions.get(partnerId);
    if (known !== undefined) return known;
    const { feed_seq: seq } = await this.trx.selectFrom('partners').select('feed_seq').where('id', '=', partnerId).executeTakeFirstOrThrow();
    this.feedPositions.set(partnerId, seq);
    return seq;
  }

  private async moveFeed(partnerId: string, seq: number): Promise<void> {
    await this.trx.updateTable('partners').set({ feed_seq: seq }).where('id', '=', partnerId).execute();
    this.feedPositions.set(partnerId, seq);
  }

  private async hasTombstones(partnerId: string): Promise<boolean> {
    const row = await this.trx.selectFrom('product_tombstones').select('seq').where('partner_id', '=', partnerId).limit(1).executeTakeFirst();
    this.tombstoned.set(partnerId, row !== undefined);
    return row !== undefined;
  }

  // Pages follow the unique (partner, identity) indexes, so each is a range read whatever the catalog's size.
  productPage(partnerId: string, afterSku: string | null, limit: number): Promise<{ id: number; sku: string }[]> {
    let query = this.trx.selectFrom('products').select(['id', 'sku']).where('partner_id', '=', partnerId);
    if (afterSku !== null) query = query.where('sku', '>', afterSku);
    return query.orderBy('sku').limit(limit).execute();
  }

  videoPage(partnerId: string, afterRef: string | null, limit: number): Promise<{ id: number; ref: string }[]> {
    let query = this.trx.selectFrom('videos').select(['id', 'ref']).where('partner_id', '=', partnerId);
    if (afterRef !== null) query = query.where('ref', '>', afterRef);
    return query.orderBy('ref').limit(limit).execute();
  }

  async deleteProducts(ids: readonly number[]): Promise<number> {
    if (ids.length === 0) return 0;
    const counted = await inLists(ids, (list) => this.trx
      .selectFrom('pdp_entries').select((eb) => eb.fn.countAll<number | string>().as('n')).where('product_id', 'in', list).execute());
    // Entries and answers go with their product (foreign keys on delete cascade).
    await deleteByIds(this.trx, 'products', ids);
    return counted.reduce((sum, row) => sum + Number(row.n), 0);
  }

  deleteVideos(ids: readonly number[]): Promise<void> {
    return deleteByIds(this.trx, 'videos', ids);
  }

  async recordDeletions(partnerId: string, products: readonly { sku: string; productId: number }[], at: Date): Promise<void> {
    if (products.length === 0) return;
    let seq = await this.feedPosition(partnerId);
    await upsertRows(this.trx, 'product_tombstones', products.map((row) => ({
      partner_id: partnerId, sku: row.sku, seq: (seq += 1), product_id: row.productId, deleted_at: at,
    })), ['seq', 'product_id', 'deleted_at']);
    await this.moveFeed(partnerId, seq);
    this.tombstoned.set(partnerId, true);
  }

  async dropTombstones(partnerId: string, before: Date): Promise<void> {
    const { top } = await this.trx.selectFrom('product_tombstones').select((eb) => eb.fn.max<number | null>('seq').as('top'))
      .where('partner_id', '=', partnerId).where('deleted_at', '<', before).executeTakeFirstOrThrow();
    if (top === null) return;
    await this.trx.deleteFrom('product_tombstones').where('partner_id', '=', partnerId).where('seq', '<=', top).where('deleted_at', '<', before).execute();
    await this.trx.updateTable('partners').set({ feed_horizon: sql<number>`greatest(feed_horizon, ${top})` }).where('id', '=', partnerId).execute();
  }

  async apiKeys(partnerIds: readonly string[], keyIds: readonly string[]): Promise<StoredApiKey[]> {
    const rows = await this.trx
      .selectFrom('api_keys')
      .select(['id', 'partner_id', 'mode', 'sha256', 'origin', 'revoked_at'])
      .where((eb) => eb.or([
        eb.and([eb('partner_id', 'in', partnerIds), eb('origin', '=', 'catalog')]),
        ...(keyIds.length === 0 ? [] : [eb('id', 'in', keyIds)]),
      ]))
      .execute();
    return rows.map((row) => ({ id: row.id, partnerId: row.partner_id, mode: row.mode, sha256: row.sha256, origin: row.origin, revoked: row.revoked_at !== null }));
  }

  async saveApiKeys(rows: readonly { id: string; partnerId: string; mode: KeyMode; sha256: string; revoked: boolean }[], at: Date): Promise<void> {
    if (rows.length === 0) return;
    const change = await this.keyChange();
    await upsertRows(this.trx, 'api_keys', rows.map((key) => ({
      id: key.id, partner_id: key.partnerId, mode: key.mode, sha256: key.sha256, origin: 'catalog' as const, created_at: at, revoked_at: key.revoked ? at : null, changed_seq: change,
    })), ['partner_id', 'mode', 'sha256', 'origin', 'changed_seq']);
  }

  async revokeApiKeys(ids: readonly string[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    const change = await this.keyChange();
    await this.trx.updateTable('api_keys').set({ revoked_at: at, changed_seq: change }).where('id', 'in', ids).where('revoked_at', 'is', null).execute();
  }

  /** The import's one key-change number, taken when it first writes a key: an import that changes none takes none. */
  private async keyChange(): Promise<number> {
    this.keyChangeNumber ??= await nextKeyChange(this.trx);
    return this.keyChangeNumber;
  }
}
