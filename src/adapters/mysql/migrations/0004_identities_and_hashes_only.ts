import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The content of products, videos and PDP entries lives in the stored answers since 0002: the
 * columns that held it were read by that migration only. What stays is each row's identity, its
 * owner and its hashes; each stored answer gains its ETag.
 */
export const identitiesAndHashesOnly: Migration = {
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
