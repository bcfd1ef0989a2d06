import { sql, type Kysely, type Migration } from 'kysely';

/**
 * What search engines need besides the specification's fields: a video's thumbnail and upload date,
 * both optional. Existing rows read null, which leaves their JSON-LD and stored answers as they are.
 */
export const videoSearchFields: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` lets a migration that failed part-way run again.
    await sql`alter table videos
      add column if not exists thumbnail_url text null,
      add column if not exists upload_date varchar(40) null`.execute(db);
  },
};
