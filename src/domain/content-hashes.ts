import { createHash } from 'node:crypto';
import type { PdpEntry, Product, Video } from './catalog.js';

/**
 * Hashes of what each stored row and each lookup answer is made from, so an import writes only
 * what changed and generates JSON-LD only where one of its sources changed. The values are hashed
 * in a fixed order that never changes: a catalog imported once hashes the same on every import.
 */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function hashOf(values: readonly unknown[]): string {
  return sha256Hex(JSON.stringify(values));
}

export function productHash(partnerId: string, product: Product): string {
  return hashOf([
    partnerId, product.sku, product.status, product.title, product.description, product.shortDescription, product.image,
    product.whatText, product.whoText, product.whyText, product.brand,
    JSON.stringify(product.properties.map((p) => ({ name: p.name, value: p.value }))),
  ]);
}

/** A video's hash covers the product it belongs to and its place there. */
export function videoHash(partnerId: string, productId: number, position: number, video: Video): string {
  const specified = [
    partnerId, video.ref, productId, position, video.published, video.name, video.description, video.aspectRatio, video.length,
    video.language, video.familyFriendly, JSON.stringify(video.genre), JSON.stringify(video.keywords), video.creator.name,
    video.creator.jobTitle, video.transcript,
  ];
  // A video with neither hashes as it did before they existed, so the first import after they came rewrites nothing.
  return hashOf(video.thumbnailUrl === null && video.uploadDate === null ? specified : [...specified, video.thumbnailUrl, video.uploadDate]);
}

/** What identifies a PDP entry within its product: its page, by hash, so any length of URL fits an index. */
export function pdpUrlHash(entry: PdpEntry): string {
  return sha256Hex(entry.pdpUrl);
}

/**
 * A PDP entry's hash covers the hashes of everything its JSON-LD is made from: the partner's
 * name, the product and the video it names.
 */
export function pdpEntryHash(productId: number, position: number, entry: PdpEntry, partnerName: string, productContent: string, videoContent: string | null): string {
  return hashOf([
    productId, pdpUrlHash(entry), position, entry.pdpUrl, entry.retailer, entry.videoRef, entry.videoFileUrl,
    partnerName, productContent, videoContent,
  ]);
}

/**
 * Hash of what a product's lookup answer is built from: its ID and hash, and the IDs and hashes
 * of its videos and PDP entries in file order.
 */
export function lookupHash(
  productId: number,
  productContent: string,
  videos: readonly (readonly [id: number, hash: string])[],
  entries: readonly (readonly [id: number, hash: string])[],
): string {
  return hashOf([productId, productContent, videos, entries]);
}

/**
 * Hash of a catalog's products, in file order, as one import reads them: every field of each, as
 * its JSON (a field added to `Product` is covered with no list to keep). With `catalogSourceHash`
 * it tells an import that a catalog's stored rows are already what the file makes of it.
 */
export class ProductsHash {
  private readonly hash = createHash('sha256');

  /** Adds the next product; returns the length of its JSON, a measure of the memory it holds. */
  add(product: Product): number {
    const text = JSON.stringify(product);
    // JSON never holds a raw newline, so one keeps each product apart.
    this.hash.update(text, 'utf8').update('\n');
    return text.length;
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}

/**
 * Hash of everything a catalog's stored rows and answers are made from: its id, the name its
 * answers' JSON-LD gives as publisher, and its products (`ProductsHash`). The rest of an answer
 * (IDs) comes from the rows themselves.
 */
export function catalogSourceHash(catalogId: string, name: string, productsHash: string): string {
  return hashOf(['catalog-source', catalogId, name, productsHash]);
}
