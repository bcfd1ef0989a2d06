import { sql, type Kysely, type Migration } from 'kysely';
import { BACKFILL_RANGE, TABLE_OPTIONS } from './conventions.js';

/**
 * Each product's whole lookup answer, in a table of its own so that writing answers never grows
 * product rows and reading product rows never reads answers; a lookup is one indexed join.
 * Products imported before this migration get theirs built here, in SQL, from the tables the
 * answer used to be aggregated from at every lookup; their `lookup_hash` stays null, so the next
 * import rewrites them as it writes every changed answer.
 */
export const productLookupDocument: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` lets a migration that failed part-way run again.
    await sql`create table if not exists product_lookups (
      product_id bigint unsigned not null primary key,
      lookup_hash char(64) null,
      lookup json not null,
      constraint product_lookups_product_fk foreign key (product_id) references products (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
    const { rows } = await sql<{ last: number | null }>`select max(id) as last from products`.execute(db);
    const last = rows[0]?.last ?? 0;
    // In id ranges, so no one statement runs into the operator's query timeout on a large catalog.
    for (let first = 1; first <= last; first += BACKFILL_RANGE) {
      await sql`insert into product_lookups (product_id, lookup_hash, lookup)
        select products.id, null, json_object(
          'sku', products.sku,
          'status', products.status,
          'product', json_object(
            'id', products.id, 'title', products.title, 'description', products.description,
            'short_description', products.short_description, 'image', products.image,
            'what_text', products.what_text, 'who_text', products.who_text, 'why_text', products.why_text,
            'videos', (select coalesce(json_arrayagg(json_object(
              'id', videos.id, 'name', videos.name, 'aspect_ratio', videos.aspect_ratio, 'length', videos.length
            ) order by videos.position), json_array()) from videos where videos.product_id = products.id and videos.published = 1),
            'pdp_urls', (select coalesce(json_arrayagg(json_object(
              'id', pdp_entries.id, 'pdp_url', pdp_entries.pdp_url, 'video_file_url', pdp_entries.video_file_url,
              'retailer', pdp_entries.retailer, 'json_ld', pdp_entries.json_ld
            ) order by pdp_entries.position), json_array()) from pdp_entries where pdp_entries.product_id = products.id)))
        from products
        where products.id between ${first} and ${first + BACKFILL_RANGE - 1}
          and not exists (select 1 from product_lookups where product_lookups.product_id = products.id)`.execute(db);
    }
  },
};
