import { createHash } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { PdpEntry, Product, Video } from '../../domain/catalog.js';
import type { VideoObjectJsonLd } from '../../domain/json-ld.js';
import type { PdpEntriesTable, ProductsTable, VideosTable } from './database.js';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Hash of a row's values in column order, so an unchanged source gives the same hash on every import. */
function contentHash(values: readonly unknown[]): string {
  return sha256Hex(JSON.stringify(values));
}

export type ProductRow = Insertable<ProductsTable> & { content_hash: string };
export type VideoRow = Insertable<VideosTable> & { content_hash: string };
export type PdpEntryRow = Insertable<PdpEntriesTable> & { content_hash: string; json_ld_hash: string | null };

export function productRow(partnerId: string, product: Product): ProductRow {
  const row = {
    partner_id: partnerId,
    sku: product.sku,
    status: product.status,
    title: product.title,
    description: product.description,
    short_description: product.shortDescription,
    image: product.image,
    what_text: product.whatText,
    who_text: product.whoText,
    why_text: product.whyText,
    brand: product.brand,
    properties: JSON.stringify(product.properties.map((p) => ({ name: p.name, value: p.value }))),
  };
  return { ...row, content_hash: contentHash(Object.values(row)) };
}

export function videoRow(partnerId: string, productId: number, position: number, video: Video): VideoRow {
  const row = {
    partner_id: partnerId,
    ref: video.ref,
    product_id: productId,
    position,
    published: video.published,
    name: video.name,
    description: video.description,
    aspect_ratio: video.aspectRatio,
    length: video.length,
    language: video.language,
    family_friendly: video.familyFriendly,
    genre: JSON.stringify(video.genre),
    keywords: JSON.stringify(video.keywords),
    creator_name: video.creator.name,
    creator_job_title: video.creator.jobTitle,
    transcript: video.transcript,
    thumbnail_url: video.thumbnailUrl,
    upload_date: video.uploadDate,
  };
  // A video with neither hashes as it did before they existed, so the first import after upgrading rewrites nothing.
  const { thumbnail_url, upload_date, ...specified } = row;
  const hashed = thumbnail_url === null && upload_date === null ? specified : row;
  return { ...row, content_hash: contentHash(Object.values(hashed)) };
}

/**
 * A PDP entry before its JSON-LD exists. Its content hash covers the hashes of everything its
 * JSON-LD is made from, so the JSON-LD is generated only for entries whose sources changed.
 */
export interface PdpEntryDraft {
  readonly product_id: number;
  readonly pdp_url_hash: string;
  readonly content_hash: string;
  complete(): PdpEntryRow;
}

export function pdpEntryDraft(
  productId: number,
  position: number,
  entry: PdpEntry,
  jsonLdSources: readonly (string | null)[],
  generate: () => VideoObjectJsonLd | null,
): PdpEntryDraft {
  const row = {
    product_id: productId,
    pdp_url_hash: sha256Hex(entry.pdpUrl),
    position,
    pdp_url: entry.pdpUrl,
    retailer: entry.retailer,
    video_ref: entry.videoRef,
    video_file_url: entry.videoFileUrl,
  };
  const content_hash = contentHash([...Object.values(row), ...jsonLdSources]);
  return {
    product_id: row.product_id,
    pdp_url_hash: row.pdp_url_hash,
    content_hash,
    complete: () => {
      const jsonLd = generate();
      const text = jsonLd === null ? null : JSON.stringify(jsonLd);
      return { ...row, json_ld: text, json_ld_hash: text === null ? null : sha256Hex(text), content_hash };
    },
  };
}

/**
 * Hash of what a product's lookup answer is built from: its ID and row, and the IDs and content
 * hashes of its videos and PDP entries in file order (an entry's hash covers its JSON-LD's sources).
 */
export function lookupSourceHash(
  productId: number,
  productHash: string,
  videos: readonly (readonly [id: number, hash: string])[],
  entries: readonly (readonly [id: number, hash: string])[],
): string {
  return contentHash([productId, productHash, videos, entries]);
}

/** Rough bytes a row adds to an INSERT statement, to keep each batch well under max_allowed_packet. */
export function approximateSize(row: object): number {
  let size = 16;
  for (const value of Object.values(row)) size += typeof value === 'string' ? value.length * 2 + 4 : 16;
  return size;
}
