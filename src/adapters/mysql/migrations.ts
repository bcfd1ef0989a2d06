import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';

// Every table compares text byte for byte: SKUs, refs and hashes match exactly (docs/decisions.md, lookups).
const TABLE_OPTIONS = sql`engine = InnoDB default charset = utf8mb4 collate = utf8mb4_bin`;

const initialSchema: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`create table partners (
      id varchar(63) not null primary key,
      name text not null
    ) ${TABLE_OPTIONS}`.execute(db);

    await sql`create table api_keys (
      id varchar(255) not null primary key,
      partner_id varchar(63) not null,
      sha256 char(64) not null,
      label varchar(255) null,
      origin enum('catalog', 'cli') not null,
      created_at datetime(3) not null default current_timestamp(3),
      revoked_at datetime(3) null,
      unique key api_keys_sha256 (sha256),
      key api_keys_partner (partner_id),
      constraint api_keys_partner_fk foreign key (partner_id) references partners (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);

    await sql`create table products (
      id bigint unsigned not null auto_increment primary key,
      partner_id varchar(63) not null,
      sku varchar(50) not null,
      status enum('active', 'inactive') not null,
      title text not null,
      description mediumtext null,
      short_description text not null,
      image text not null,
      what_text text not null,
      who_text text not null,
      why_text text not null,
      brand text not null,
      properties json not null,
      content_hash char(64) not null,
      unique key products_partner_sku (partner_id, sku),
      constraint products_partner_fk foreign key (partner_id) references partners (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);

    await sql`create table videos (
      id bigint unsigned not null auto_increment primary key,
      partner_id varchar(63) not null,
      ref varchar(255) not null,
      product_id bigint unsigned not null,
      position int unsigned not null,
      published boolean not null,
      name text null,
      description mediumtext null,
      aspect_ratio varchar(32) not null,
      length double not null,
      language varchar(64) not null,
      family_friendly boolean not null,
      genre json not null,
      keywords json not null,
      creator_name text not null,
      creator_job_title text not null,
      transcript mediumtext null,
      content_hash char(64) not null,
      unique key videos_partner_ref (partner_id, ref),
      key videos_product_position (product_id, position),
      constraint videos_product_fk foreign key (product_id) references products (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);

    await sql`create table pdp_entries (
      id bigint unsigned not null auto_increment primary key,
      product_id bigint unsigned not null,
      pdp_url_hash char(64) not null,
      position int unsigned not null,
      pdp_url text not null,
      retailer text null,
      video_ref varchar(255) null,
      video_file_url text null,
      json_ld json null,
      json_ld_hash char(64) null,
      content_hash char(64) not null,
      unique key pdp_entries_product_url (product_id, pdp_url_hash),
      key pdp_entries_product_position (product_id, position),
      constraint pdp_entries_product_fk foreign key (product_id) references products (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
  },
};

const BACKFILL_RANGE = 10_000;

/**
 * Each product's whole lookup answer, in a table of its own so that writing answers never grows
 * product rows and reading product rows never reads answers; a lookup is one indexed join.
 * Products imported before this migration get theirs built here, in SQL, from the tables the
 * answer used to be aggregated from at every lookup; their `lookup_hash` stays null, so the next
 * import rewrites them as it writes every changed answer.
 */
const productLookupDocument: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` lets a migration that failed part-way run again.
    await sql`create table if not exists product_lookups (
      product_id bigint unsigned not null primary key,
      lookup_hash char(64) null,
      lookup json not null,
      constraint product_lookups_product_fk foreign key (product_id) references products (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
    const { rows } = await sql<{ last: number | null }>`select max(id) as last from products`.execute(db);
    const last = rows[0]?.last ?? 0;
    // In id ranges, so no one statement runs into the operator's query timeout on a large catalog.
    for (let first = 1; first <= last; first += BACKFILL_RANGE) {
      await sql`insert into product_lookups (product_id, lookup_hash, lookup)
        select products.id, null, json_object(
          'sku', products.sku,
          'status', products.status,
          'product', json_object(
            'id', products.id, 'title', products.title, 'description', products.description,
            'short_description', products.short_description, 'image', products.image,
            'what_text', products.what_text, 'who_text', products.who_text, 'why_text', products.why_text,
            'videos', (select coalesce(json_arrayagg(json_object(
              'id', videos.id, 'name', videos.name, 'aspect_ratio', videos.aspect_ratio, 'length', videos.length
            ) order by videos.position), json_array()) from videos where videos.product_id = products.id and videos.published = 1),
            'pdp_urls', (select coalesce(json_arrayagg(json_object(
              'id', pdp_entries.id, 'pdp_url', pdp_entries.pdp_url, 'video_file_url', pdp_entries.video_file_url,
              'retailer', pdp_entries.retailer, 'json_ld', pdp_entries.json_ld
            ) order by pdp_entries.position), json_array()) from pdp_entries where pdp_entries.product_id = products.id)))
        from products
        where products.id between ${first} and ${first + BACKFILL_RANGE - 1}
          and not exists (select 1 from product_lookups where product_lookups.product_id = products.id)`.execute(db);
    }
  },
};

/**
 * What search engines need besides the specification's fields: a video's thumbnail and upload date,
 * both optional. Existing rows read null, which leaves their JSON-LD and stored answers as they are.
 */
const videoSearchFields: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` lets a migration that failed part-way run again.
    await sql`alter table videos
      add column if not exists thumbnail_url text null,
      add column if not exists upload_date varchar(40) null`.execute(db);
  },
};

/**
 * The content of products, videos and PDP entries lives in the stored answers since 0002: the
 * columns that held it were read by that migration only. What stays is each row's identity, its
 * owner and its hashes; each stored answer gains its ETag.
 */
const identitiesAndHashesOnly: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if exists` lets a migration that failed part-way run again.
    await sql`alter table products
      drop column if exists status, drop column if exists title, drop column if exists description,
      drop column if exists short_description, drop column if exists image, drop column if exists what_text,
      drop column if exists who_text, drop column if exists why_text, drop column if exists brand,
      drop column if exists properties`.execute(db);
    await sql`alter table videos
      drop index if exists videos_product_position, add index if not exists videos_product (product_id),
      drop column if exists position, drop column if exists published, drop column if exists name,
      drop column if exists description, drop column if exists aspect_ratio, drop column if exists length,
      drop column if exists language, drop column if exists family_friendly, drop column if exists genre,
      drop column if exists keywords, drop column if exists creator_name, drop column if exists creator_job_title,
      drop column if exists transcript, drop column if exists thumbnail_url, drop column if exists upload_date`.execute(db);
    await sql`alter table pdp_entries
      drop index if exists pdp_entries_product_position,
      drop column if exists position, drop column if exists pdp_url, drop column if exists retailer,
      drop column if exists video_ref, drop column if exists video_file_url, drop column if exists json_ld`.execute(db);
    // Each answer's ETag beside it, written by the import that writes the answer; forgetting the
    // hashes of the answers stored so far makes the next import rewrite each one with its ETag.
    await sql`alter table product_lookups add column if not exists etag varchar(40) null`.execute(db);
    await sql`update product_lookups set lookup_hash = null where etag is null`.execute(db);
  },
};

/**
 * The changes feed: per partner, one row per product at its latest change, by position. Every
 * product already imported is listed once, as the feed's beginning.
 */
const changesFeed: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` and `insert ignore` let a migration that failed part-way run again.
    await sql`alter table partners
      add column if not exists feed_seq bigint unsigned not null default 0,
      add column if not exists feed_horizon bigint unsigned not null default 0`.execute(db);
    await sql`create table if not exists product_changes (
      partner_id varchar(63) not null,
      sku varchar(50) not null,
      seq bigint unsigned not null,
      product_id bigint unsigned not null,
      deleted boolean not null,
      etag varchar(40) null,
      changed_at datetime(3) not null,
      primary key (partner_id, sku),
      unique key product_changes_position (partner_id, seq),
      key product_changes_tombstones (partner_id, deleted, changed_at),
      constraint product_changes_partner_fk foreign key (partner_id) references partners (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
    await sql`insert ignore into product_changes (partner_id, sku, seq, product_id, deleted, etag, changed_at)
      select products.partner_id, products.sku, row_number() over (partition by products.partner_id order by products.id),
        products.id, false, product_lookups.etag, current_timestamp(3)
      from products left join product_lookups on product_lookups.product_id = products.id`.execute(db);
    await sql`update partners set feed_seq = (select coalesce(max(seq), 0) from product_changes where product_changes.partner_id = partners.id)`.execute(db);
  },
};

/**
 * The partner portal: admins (from one-use invitations), their server-side sessions, sign-in
 * failures and locks per email, and the audit log. Tokens and session ids are kept as SHA-256
 * only, passwords as scrypt hashes. Each key gains the time it was last used, written by every
 * instance in a batch a minute, never per request.
 */
const partnerPortal: Migration = {
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

/**
 * The changes feed moves onto the rows an import writes anyway: each stored answer carries its
 * product's feed position, so listing a change costs no write of its own; deleted products are
 * kept in a small table of tombstones. A page reads one range of each, by `(partner_id, position)`.
 * The answers' position index also holds what a page lists of them (ETag, time; the product id
 * comes with every index entry), so a page never reads the rows, whose answers are kilobytes each.
 */
const feedOnAnswers: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists`, `insert ignore` and the checks below let a migration that failed part-way run again.
    await sql`alter table product_lookups
      add column if not exists partner_id varchar(63) null,
      add column if not exists feed_seq bigint unsigned null,
      add column if not exists changed_at datetime(3) null`.execute(db);
    await sql`create table if not exists product_tombstones (
      partner_id varchar(63) not null,
      sku varchar(50) not null,
      seq bigint unsigned not null,
      product_id bigint unsigned not null,
      deleted_at datetime(3) not null,
      primary key (partner_id, sku),
      unique key product_tombstones_position (partner_id, seq),
      key product_tombstones_age (partner_id, deleted_at),
      constraint product_tombstones_partner_fk foreign key (partner_id) references partners (id) on delete cascade
    ) ${TABLE_OPTIONS}`.execute(db);
    const { rows: tables } = await sql<{ n: number }>`select count(*) as n from information_schema.tables
      where table_schema = database() and table_name = 'product_changes'`.execute(db);
    if (Number(tables[0]?.n) > 0) {
      const { rows } = await sql<{ last: number | null }>`select max(product_id) as last from product_lookups`.execute(db);
      const last = rows[0]?.last ?? 0;
      // In id ranges, so no one statement runs into the operator's query timeout on a large catalog.
      for (let first = 1; first <= last; first += BACKFILL_RANGE) {
        await sql`update product_lookups
          join products on products.id = product_lookups.product_id
          left join product_changes on product_changes.partner_id = products.partner_id and product_changes.sku = products.sku and product_changes.deleted = false
          set product_lookups.partner_id = products.partner_id, product_lookups.feed_seq = product_changes.seq,
            product_lookups.changed_at = coalesce(product_changes.changed_at, current_timestamp(3))
          where product_lookups.product_id between ${first} and ${first + BACKFILL_RANGE - 1}`.execute(db);
      }
      await sql`insert ignore into product_tombstones (partner_id, sku, seq, product_id, deleted_at)
        select partner_id, sku, seq, product_id, changed_at from product_changes where deleted = true`.execute(db);
      await sql`drop table product_changes`.execute(db);
    }
    // An answer the old feed did not list (none is expected) takes its partner's next position.
    const { rows: unlisted } = await sql<{ product_id: number; partner_id: string }>`select product_lookups.product_id, products.partner_id
      from product_lookups join products on products.id = product_lookups.product_id
      where product_lookups.feed_seq is null order by products.partner_id, products.id`.execute(db);
    for (const row of unlisted) {
      await sql`update partners set feed_seq = feed_seq + 1 where id = ${row.partner_id}`.execute(db);
      await sql`update product_lookups set partner_id = ${row.partner_id}, changed_at = current_timestamp(3),
        feed_seq = (select feed_seq from partners where id = ${row.partner_id}) where product_id = ${row.product_id}`.execute(db);
    }
    await sql`alter table product_lookups
      modify partner_id varchar(63) not null,
      modify feed_seq bigint unsigned not null,
      modify changed_at datetime(3) not null,
      add unique key if not exists product_lookups_position (partner_id, feed_seq, etag, changed_at)`.execute(db);
  },
};

/**
 * Secrets of the deployment, by name, made by the first instance that needs one and then shared
 * by every instance: the key that signs changes-feed cursors (`changes_cursor`). `created_at`
 * says since when the deployment has used it.
 */
const serviceSecrets: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`create table if not exists service_secrets (
      name varchar(63) not null primary key,
      value varchar(255) not null,
      created_at datetime(3) not null
    ) ${TABLE_OPTIONS}`.execute(db);
  },
};

/**
 * The portal's records are pruned by age (failures out of their window, ended locks, audit events
 * past their retention): each by an index on its time, so a prune reads and locks only what it
 * deletes. Failed sign-ins for emails no admin has are no longer audited: the ones written before
 * (partner_id null) were never shown to anyone, and go.
 */
const adminRecordsRetention: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`alter table admin_sign_in_failures add key if not exists admin_sign_in_failures_age (failed_at)`.execute(db);
    await sql`alter table admin_sign_in_locks add key if not exists admin_sign_in_locks_until (locked_until)`.execute(db);
    await sql`alter table audit_events add key if not exists audit_events_age (at)`.execute(db);
    await sql`delete from audit_events where partner_id is null`.execute(db);
  },
};

/** Migrations live in code so they run the same under tsx and compiled, with no directory to scan. */
export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve({
    '0001_initial_schema': initialSchema,
    '0002_product_lookup_document': productLookupDocument,
    '0003_video_search_fields': videoSearchFields,
    '0004_identities_and_hashes_only': identitiesAndHashesOnly,
    '0005_changes_feed': changesFeed,
    '0006_partner_portal': partnerPortal,
    '0007_feed_on_answers': feedOnAnswers,
    '0008_service_secrets': serviceSecrets,
    '0009_admin_records_retention': adminRecordsRetention,
  }),
};
