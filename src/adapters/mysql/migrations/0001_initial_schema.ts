import { sql, type Kysely, type Migration } from 'kysely';
import { TABLE_OPTIONS } from './conventions.js';

export const initialSchema: Migration = {
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
