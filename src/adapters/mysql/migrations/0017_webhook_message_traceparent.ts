import { sql, type Kysely, type Migration } from 'kysely';

/**
 * A webhook message keeps the W3C `traceparent` of the import that queued it (decisions: traces), so
 * each attempt at delivering it draws a link to the import's trace, whichever instance makes it and
 * however long after. Null when the import was not traced, and for every message queued before.
 * Version 00 of the header, the one written, is 55 characters.
 */
export const webhookMessageTraceparent: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` lets a migration that failed part-way run again.
    await sql`alter table webhook_messages add column if not exists traceparent varchar(55) null`.execute(db);
  },
};
