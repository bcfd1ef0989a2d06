import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Each catalog (a partner's, or a sandbox's: both are `partners` rows) keeps the hash of the source
 * its rows were last imported from (`catalogSourceHash`), so an import tells an unchanged catalog
 * apart with one read for many and writes nothing of it (decisions.md, what an import does). Null,
 * as every row is after this migration, means not known to match: the next import examines the
 * catalog row by row and tells the instances of it. A later migration that rebuilds stored answers
 * must set it back to null.
 */
export const catalogSourceHash: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` lets a migration that failed part-way run again.
    await sql`alter table partners add column if not exists source_hash char(64) null`.execute(db);
  },
};
