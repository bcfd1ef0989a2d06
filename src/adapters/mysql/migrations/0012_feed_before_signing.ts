import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Which partners may hold a cursor of the earlier, unsigned form (`c1.`): those whose feed the
 * database held before the deployment began signing its cursors. Signing begins when the first
 * instance makes the cursor key (the `changes_cursor` row of `service_secrets`), and a version that
 * signs makes it before it writes or serves any page; so a feed entry older than that row, or any
 * entry at all where there is no row yet, was written by a version that issued unsigned cursors.
 * Decided once, here: no later version issues one, and a later import may move an entry on.
 */
export const feedBeforeSigning: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` and an update that only sets lets a migration that failed part-way run again.
    await sql`alter table partners add column if not exists feed_before_signing boolean not null default false`.execute(db);
    const { rows } = await sql<{ created_at: Date }>`select created_at from service_secrets where name = 'changes_cursor'`.execute(db);
    const signingSince = rows[0]?.created_at;
    const answers = signingSince === undefined ? sql`true` : sql`product_lookups.changed_at < ${signingSince}`;
    const tombstones = signingSince === undefined ? sql`true` : sql`product_tombstones.deleted_at < ${signingSince}`;
    await sql`update partners set feed_before_signing = true
      where exists (select 1 from product_lookups where product_lookups.partner_id = partners.id and ${answers})
        or exists (select 1 from product_tombstones where product_tombstones.partner_id = partners.id and ${tombstones})`.execute(db);
  },
};
