import { sql, type Kysely, type Migration } from 'kysely';
import { TABLE_OPTIONS } from './conventions.js';

/**
 * Every change to a key (issued, revoked, replaced, written by an import) takes the next number of
 * one counter, in its own transaction, and stamps it on the key's row: an instance that holds the
 * keys reads only the rows changed since the last number it applied, never every key. The counter's
 * row stays locked until the change commits, so numbers are taken in commit order and a reader never
 * passes over a change still to commit. Rows stored before this migration carry 0: every instance
 * reads them when it loads the whole set at start.
 */
export const keyChangeSequence: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` and `insert ignore` let a migration that failed part-way run again.
    await sql`create table if not exists key_change_sequence (
      id tinyint unsigned not null primary key,
      seq bigint unsigned not null
    ) ${TABLE_OPTIONS}`.execute(db);
    await sql`insert ignore into key_change_sequence (id, seq) values (1, 0)`.execute(db);
    await sql`alter table api_keys add column if not exists changed_seq bigint unsigned not null default 0`.execute(db);
    await sql`alter table api_keys add index if not exists api_keys_changed_seq (changed_seq)`.execute(db);
  },
};
