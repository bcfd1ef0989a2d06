import { sql, type Kysely, type Migration } from 'kysely';
import { TABLE_OPTIONS } from './conventions.js';

/**
 * Partners' webhook endpoints: the URL (stored in its checked, ASCII form), the status, and the
 * signing secrets, kept as they are since every message is signed with them; the secret before the
 * last rotation with the time until which it still signs. The audit log gains the endpoint a
 * `webhook.*` event is about.
 */
export const webhookEndpoints: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` lets a migration that failed part-way run again.
    await sql`create table if not exists webhook_endpoints (
      id varchar(32) not null primary key,
      partner_id varchar(63) not null,
      url varchar(2048) not null,
      description varchar(255) null,
      status varchar(8) not null,
      secret varchar(64) not null,
      previous_secret varchar(64) null,
      previous_secret_until datetime(3) null,
      created_at datetime(3) not null,
      key webhook_endpoints_partner (partner_id, created_at),
      constraint webhook_endpoints_partner_fk foreign key (partner_id) references partners (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
    await sql`alter table audit_events add column if not exists endpoint_id varchar(32) null`.execute(db);
  },
};
