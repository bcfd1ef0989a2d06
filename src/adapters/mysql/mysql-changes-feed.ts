import type { Kysely } from 'kysely';
import type { ChangesFeed, FeedPage } from '../../application/ports/changes-feed.js';
import type { Database } from './database.js';

/**
 * A partner's feed read in one range of the `(partner_id, seq)` index, whatever the catalog's
 * size, and its horizon by primary key.
 */
export class MysqlChangesFeed implements ChangesFeed {
  constructor(private readonly db: Kysely<Database>) {}

  async read(partnerId: string, afterSeq: number, limit: number): Promise<FeedPage> {
    const [rows, partner] = await Promise.all([
      this.db.selectFrom('product_changes')
        .select(['seq', 'sku', 'product_id', 'deleted', 'etag', 'changed_at'])
        .where('partner_id', '=', partnerId).where('seq', '>', afterSeq)
        .orderBy('seq').limit(limit).execute(),
      this.db.selectFrom('partners').select('feed_horizon').where('id', '=', partnerId).executeTakeFirst(),
    ]);
    return {
      entries: rows.map((row) => ({
        seq: row.seq, sku: row.sku, productId: row.product_id, change: row.deleted ? 'deleted' : 'upserted', etag: row.etag, changedAt: row.changed_at,
      })),
      horizon: partner?.feed_horizon ?? 0,
    };
  }
}
