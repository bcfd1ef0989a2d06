import { sql, type Kysely, type Migration } from 'kysely';
import { TABLE_OPTIONS } from './conventions.js';

/**
 * Secrets of the deployment, by name, made by the first instance that needs one and then shared
 * by every instance: the key that signs changes-feed cursors (`changes_cursor`). `created_at`
 * says since when the deployment has used it.
 */
export const serviceSecrets: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`create table if not exists service_secrets (
      name varchar(63) not null primary key,
      value varchar(255) not null,
      created_at datetime(3) not null
    ) ${TABLE_OPTIONS}`.execute(db);
  },
};
