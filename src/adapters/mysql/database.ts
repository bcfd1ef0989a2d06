import type { ColumnType, Generated } from 'kysely';
import type { ProductProperty, ProductStatus } from '../../domain/catalog.js';
import type { VideoObjectJsonLd } from '../../domain/json-ld.js';
import type { LookupResult } from '../../domain/lookup-result.js';

/** A JSON column: written as JSON text, read back parsed (mysql2 parses MariaDB JSON). */
type Json<T> = ColumnType<T, string, string>;
/** MariaDB BOOLEAN is TINYINT(1): written as a boolean, read back as 0 or 1. */
type Flag = ColumnType<number, boolean, boolean>;
/** Set by the database on insert unless given. */
type CreatedAt = ColumnType<Date, Date | undefined, never>;

export interface PartnersTable {
  id: string;
  name: string;
}

/** Only the SHA-256 of a key is ever stored; `origin` tells file keys from CLI-issued ones. */
export interface ApiKeysTable {
  id: string;
  partner_id: string;
  sha256: string;
  label: string | null;
  origin: 'catalog' | 'cli';
  created_at: CreatedAt;
  revoked_at: Date | null;
}

/** `content_hash` is the SHA-256 of the row's own source fields: an import skips rows whose hash is unchanged. */
export interface ProductsTable {
  id: Generated<number>;
  partner_id: string;
  sku: string;
  status: ProductStatus;
  title: string;
  description: string | null;
  short_description: string;
  image: string;
  what_text: string;
  who_text: string;
  why_text: string;
  brand: string;
  properties: Json<ProductProperty[]>;
  content_hash: string;
}

/** The whole answer to a lookup of a product, written by the import that changed its sources. */
export interface ProductLookupsTable {
  product_id: number;
  /** Hash of everything `lookup` is built from (IDs and content hashes); null when the migration built it. */
  lookup_hash: string | null;
  lookup: Json<LookupResult>;
}

export interface VideosTable {
  id: Generated<number>;
  partner_id: string;
  ref: string;
  product_id: number;
  /** The video's place in its product's list in the catalog file. */
  position: number;
  published: Flag;
  name: string | null;
  description: string | null;
  aspect_ratio: string;
  length: number;
  language: string;
  family_friendly: Flag;
  genre: Json<string[]>;
  keywords: Json<string[]>;
  creator_name: string;
  creator_job_title: string;
  transcript: string | null;
  thumbnail_url: string | null;
  /** As the catalog wrote it: an ISO 8601 date, or a date-time with its offset. */
  upload_date: string | null;
  content_hash: string;
}

export interface PdpEntriesTable {
  id: Generated<number>;
  product_id: number;
  /** SHA-256 of `pdp_url`: the identity (product, pdp_url) as an indexable key of any URL length. */
  pdp_url_hash: string;
  position: number;
  pdp_url: string;
  retailer: string | null;
  video_ref: string | null;
  video_file_url: string | null;
  json_ld: ColumnType<VideoObjectJsonLd | null, string | null, string | null>;
  json_ld_hash: string | null;
  content_hash: string;
}

export interface Database {
  partners: PartnersTable;
  api_keys: ApiKeysTable;
  products: ProductsTable;
  product_lookups: ProductLookupsTable;
  videos: VideosTable;
  pdp_entries: PdpEntriesTable;
}
