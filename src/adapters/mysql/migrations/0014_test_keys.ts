import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Keys have a mode: a live key reads its partner's catalog, a test key its sandbox. Every key
 * stored before this migration was issued or listed as live.
 */
export const testKeys: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` lets a migration that failed part-way run again.
    await sql`alter table api_keys add column if not exists mode enum('live', 'test') not null default 'live'`.execute(db);
  },
};
