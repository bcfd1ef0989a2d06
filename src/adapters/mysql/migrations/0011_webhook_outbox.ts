import { sql, type Kysely, type Migration } from 'kysely';
import { TABLE_OPTIONS } from './conventions.js';

/**
 * The webhook outbox: each message with the exact body its attempts sign and send, a delivery per
 * message and endpoint (its state, when it is due, and the claim a worker holds it by), and every
 * attempt for the delivery log. An import writes its messages and deliveries in its own transaction.
 */
export const webhookOutbox: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` lets a migration that failed part-way run again.
    await sql`create table if not exists webhook_messages (
      id varchar(32) not null primary key,
      partner_id varchar(63) not null,
      type varchar(32) not null,
      body mediumtext not null,
      created_at datetime(3) not null,
      key webhook_messages_partner (partner_id, created_at),
      constraint webhook_messages_partner_fk foreign key (partner_id) references partners (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
    await sql`create table if not exists webhook_deliveries (
      id bigint unsigned not null auto_increment primary key,
      message_id varchar(32) not null,
      endpoint_id varchar(32) not null,
      attempts int unsigned not null default 0,
      state varchar(9) not null,
      next_attempt_at datetime(3) not null,
      claim_token varchar(32) null,
      claim_expires_at datetime(3) null,
      created_at datetime(3) not null,
      key webhook_deliveries_due (state, next_attempt_at),
      key webhook_deliveries_claim (claim_token),
      key webhook_deliveries_endpoint (endpoint_id, message_id),
      constraint webhook_deliveries_message_fk foreign key (message_id) references webhook_messages (id) on delete cascade,
      constraint webhook_deliveries_endpoint_fk foreign key (endpoint_id) references webhook_endpoints (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
    await sql`create table if not exists webhook_attempts (
      id bigint unsigned not null auto_increment primary key,
      delivery_id bigint unsigned not null,
      endpoint_id varchar(32) not null,
      attempt int unsigned not null,
      at datetime(3) not null,
      status smallint unsigned null,
      error varchar(32) null,
      duration_ms int unsigned not null,
      excerpt varbinary(1024) not null,
      key webhook_attempts_endpoint (endpoint_id, at),
      key webhook_attempts_at (at),
      constraint webhook_attempts_delivery_fk foreign key (delivery_id) references webhook_deliveries (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
  },
};
