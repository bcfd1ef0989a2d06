import { sql, type Kysely, type Migration } from 'kysely';
import { BACKFILL_RANGE, TABLE_OPTIONS } from './conventions.js';

/**
 * The changes feed moves onto the rows an import writes anyway: each stored answer carries its
 * product's feed position, so listing a change costs no write of its own; deleted products are
 * kept in a small table of tombstones. A page reads one range of each, by `(partner_id, position)`.
 * The answers' position index also holds what a page lists of them (ETag, time; the product id
 * comes with every index entry), so a page never reads the rows, whose answers are kilobytes each.
 */
export const feedOnAnswers: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists`, `insert ignore` and the checks below let a migration that failed part-way run again.
    await sql`alter table product_lookups
      add column if not exists partner_id varchar(63) null,
      add column if not exists feed_seq bigint unsigned null,
      add column if not exists changed_at datetime(3) null`.execute(db);
    await sql`create table if not exists product_tombstones (
      partner_id varchar(63) not null,
      sku varchar(50) not null,
      seq bigint unsigned not null,
      product_id bigint unsigned not null,
      deleted_at datetime(3) not null,
      primary key (partner_id, sku),
      unique key product_tombstones_position (partner_id, seq),
      key product_tombstones_age (partner_id, deleted_at),
      constraint product_tombstones_partner_fk foreign key (partner_id) references partners (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
    const { rows: tables } = await sql<{ n: number }>`select count(*) as n from information_schema.tables
      where table_schema = database() and table_name = 'product_changes'`.execute(db);
    if (Number(tables[0]?.n) > 0) {
      const { rows } = await sql<{ last: number | null }>`select max(product_id) as last from product_lookups`.execute(db);
      const last = rows[0]?.last ?? 0;
      // In id ranges, so no one statement runs into the operator's query timeout on a large catalog.
      for (let first = 1; first <= last; first += BACKFILL_RANGE) {
        await sql`update product_lookups
          join products on products.id = product_lookups.product_id
          left join product_changes on product_changes.partner_id = products.partner_id and product_changes.sku = products.sku and product_changes.deleted = false
          set product_lookups.partner_id = products.partner_id, product_lookups.feed_seq = product_changes.seq,
            product_lookups.changed_at = coalesce(product_changes.changed_at, current_timestamp(3))
          where product_lookups.product_id between ${first} and ${first + BACKFILL_RANGE - 1}`.execute(db);
      }
      await sql`insert ignore into product_tombstones (partner_id, sku, seq, product_id, deleted_at)
        select partner_id, sku, seq, product_id, changed_at from product_changes where deleted = true`.execute(db);
      await sql`drop table product_changes`.execute(db);
    }
    // An answer the old feed did not list (none is expected) takes its partner's next position.
    const { rows: unlisted } = await sql<{ product_id: number; partner_id: string }>`select product_lookups.product_id, products.partner_id
      from product_lookups join products on products.id = product_lookups.product_id
      where product_lookups.feed_seq is null order by products.partner_id, products.id`.execute(db);
    for (const row of unlisted) {
      await sql`update partners set feed_seq = feed_seq + 1 where id = ${row.partner_id}`.execute(db);
      await sql`update product_lookups set partner_id = ${row.partner_id}, changed_at = current_timestamp(3),
        feed_seq = (select feed_seq from partners where id = ${row.partner_id}) where product_id = ${row.product_id}`.execute(db);
    }
    await sql`alter table product_lookups
      modify partner_id varchar(63) not null,
      modify feed_seq bigint unsigned not null,
      modify changed_at datetime(3) not null,
      add unique key if not exists product_lookups_position (partner_id, feed_seq, etag, changed_at)`.execute(db);
  },
};
