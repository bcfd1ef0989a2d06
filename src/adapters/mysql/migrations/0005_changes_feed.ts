import { sql, type Kysely, type Migration } from 'kysely';
import { TABLE_OPTIONS } from './conventions.js';

/**
 * The changes feed: per partner, one row per product at its latest change, by position. Every
 * product already imported is listed once, as the feed's beginning.
 */
export const changesFeed: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` and `insert ignore` let a migration that failed part-way run again.
    await sql`alter table partners
      add column if not exists feed_seq bigint unsigned not null default 0,
      add column if not exists feed_horizon bigint unsigned not null default 0`.execute(db);
    await sql`create table if not exists product_changes (
      partner_id varchar(63) not null,
      sku varchar(50) not null,
      seq bigint unsigned not null,
      product_id bigint unsigned not null,
      deleted boolean not null,
      etag varchar(40) null,
      changed_at datetime(3) not null,
      primary key (partner_id, sku),
      unique key product_changes_position (partner_id, seq),
      key product_changes_tombstones (partner_id, deleted, changed_at),
      constraint product_changes_partner_fk foreign key (partner_id) references partners (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
    await sql`insert ignore into product_changes (partner_id, sku, seq, product_id, deleted, etag, changed_at)
      select products.partner_id, products.sku, row_number() over (partition by products.partner_id order by products.id),
        products.id, false, product_lookups.etag, current_timestamp(3)
      from products left join product_lookups on product_lookups.product_id = products.id`.execute(db);
    await sql`update partners set feed_seq = (select coalesce(max(seq), 0) from product_changes where product_changes.partner_id = partners.id)`.execute(db);
  },
};
