import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { ChangesFeed, FeedPage } from '../../application/changes/changes-feed.js';
import { activeSpan, traced } from '../tracing/tracing.js';
import type { Database } from './database.js';

/**
 * A partner's feed is its stored answers and its tombstones, each by position: a page is one range
 * of `product_lookups_position (partner_id, feed_seq, etag, changed_at)`, which holds all a page
 * lists of an answer but its SKU (so the answers themselves, kilobytes each, are never read), and
 * one of `product_tombstones_position (partner_id, seq)`, merged, whatever the catalog's size. The
 * SKU comes from `products` by primary key. Both are read in one read-only transaction with the
 * horizon, so a page never mixes the feed before an import with the feed after.
 */
export class MysqlChangesFeed implements ChangesFeed {
  constructor(private readonly db: Kysely<Database>) {}

  read(partnerId: string, afterSeq: number, limit: number): Promise<FeedPage> {
    if (activeSpan() === undefined) return this.readPage(partnerId, afterSeq, limit);
    return traced('mysql changes page', { 'db.system.name': 'mysql', 'db.operation.name': 'SELECT', 'pcat.partner.id': partnerId, 'pcat.feed.rows_asked': limit }, async (span) => {
      const page = await this.readPage(partnerId, afterSeq, limit);
      span?.setAttribute('pcat.feed.entries', page.entries.length);
      return page;
    });
  }

  private readPage(partnerId: string, afterSeq: number, limit: number): Promise<FeedPage> {
    return this.db.transaction().setAccessMode('read only').execute(async (trx) => {
      const partner = await trx.selectFrom('partners').select('feed_horizon').where('id', '=', partnerId).executeTakeFirst();
      const { rows } = await feedPageQuery(partnerId, afterSeq, limit).execute(trx);
      return {
        entries: rows.map((row) => ({
          seq: row.seq, sku: row.sku, productId: row.product_id, change: row.deleted === 1 ? 'deleted' : 'upserted', etag: row.etag, changedAt: row.changed_at,
        })),
        horizon: partner?.feed_horizon ?? 0,
      };
    });
  }
}

interface FeedRow {
  readonly seq: number;
  readonly sku: string;
  readonly product_id: number;
  readonly deleted: number;
  readonly etag: string | null;
  readonly changed_at: Date;
}

/** The statement of one page: the entries after `afterSeq`, at most `limit`, by position. */
export function feedPageQuery(partnerId: string, afterSeq: number, limit: number): RawBuilder<FeedRow> {
  return sql<FeedRow>`
    select seq, sku, product_id, deleted, etag, changed_at from (
      (select product_lookups.feed_seq as seq, products.sku, product_lookups.product_id, 0 as deleted, product_lookups.etag, product_lookups.changed_at
        from product_lookups join products on products.id = product_lookups.product_id
        where product_lookups.partner_id = ${partnerId} and product_lookups.feed_seq > ${afterSeq}
        order by product_lookups.feed_seq limit ${limit})
      union all
      (select seq, sku, product_id, 1 as deleted, null as etag, deleted_at as changed_at
        from product_tombstones where partner_id = ${partnerId} and seq > ${afterSeq}
        order by seq limit ${limit})
    ) as page order by seq limit ${limit}`;
}
