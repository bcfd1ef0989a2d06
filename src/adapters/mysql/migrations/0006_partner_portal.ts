import { sql, type Kysely, type Migration } from 'kysely';
import { TABLE_OPTIONS } from './conventions.js';

/**
 * The partner portal: admins (from one-use invitations), their server-side sessions, sign-in
 * failures and locks per email, and the audit log. Tokens and session ids are kept as SHA-256
 * only, passwords as scrypt hashes. Each key gains the time it was last used, written by every
 * instance in a batch a minute, never per request.
 */
export const partnerPortal: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` lets a migration that failed part-way run again.
    await sql`alter table api_keys add column if not exists last_used_at datetime(3) null`.execute(db);
    await sql`create table if not exists partner_admins (
      id char(24) not null primary key,
      partner_id varchar(63) not null,
      email varchar(254) not null,
      password_hash varchar(255) not null,
      created_at datetime(3) not null,
      unique key partner_admins_email (email),
      key partner_admins_partner (partner_id),
      constraint partner_admins_partner_fk foreign key (partner_id) references partners (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
    await sql`create table if not exists admin_invitations (
      token_hash char(64) not null primary key,
      partner_id varchar(63) not null,
      email varchar(254) not null,
      created_at datetime(3) not null,
      expires_at datetime(3) not null,
      used_at datetime(3) null,
      key admin_invitations_partner (partner_id),
      constraint admin_invitations_partner_fk foreign key (partner_id) references partners (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
    await sql`create table if not exists admin_sessions (
      id_hash char(64) not null primary key,
      admin_id char(24) not null,
      partner_id varchar(63) not null,
      email varchar(254) not null,
      csrf_token varchar(64) not null,
      created_at datetime(3) not null,
      last_seen_at datetime(3) not null,
      key admin_sessions_admin (admin_id),
      key admin_sessions_last_seen (last_seen_at),
      constraint admin_sessions_admin_fk foreign key (admin_id) references partner_admins (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
    await sql`create table if not exists admin_sign_in_failures (
      id bigint unsigned not null auto_increment primary key,
      email varchar(254) not null,
      failed_at datetime(3) not null,
      key admin_sign_in_failures_email (email, failed_at)
    ) ${TABLE_OPTIONS}`.execute(db);
    await sql`create table if not exists admin_sign_in_locks (
      email varchar(254) not null primary key,
      locked_until datetime(3) not null
    ) ${TABLE_OPTIONS}`.execute(db);
    // No foreign key: the history outlives what it names.
    await sql`create table if not exists audit_events (
      id bigint unsigned not null auto_increment primary key,
      at datetime(3) not null,
      partner_id varchar(63) null,
      admin_email varchar(254) null,
      action varchar(32) not null,
      key_id varchar(255) null,
      key audit_events_partner (partner_id, id)
    ) ${TABLE_OPTIONS}`.execute(db);
  },
};
