import { Buffer } from 'node:buffer';
import type { Product } from './catalog.js';
import { toLookupResult } from './lookup-result.js';

/**
 * The most a product's answer (what a lookup returns for it, its JSON-LD included) may weigh, in
 * bytes of JSON. Each product's answer is stored as one row, so one statement carries it whole:
 * this bound is what the database's packet must hold (twice it, escaped in a statement).
 */
export const MAX_ANSWER_BYTES = 4_000_000;

/** Every escape JSON may write for one UTF-16 code unit is at most this many bytes (`\u001f`). */
const BYTES_PER_CHARACTER = 6;
/** Room for the names and punctuation around each object of an answer. */
const BYTES_PER_OBJECT = 2_000;

/**
 * The bytes of the product's answer when they pass the bound; null when they do not. Counting
 * is cheap: only a product whose text could pass the bound has its answer written out and weighed.
 */
export function answerBytesOverBound(product: Product, publisherName: string): number | null {
  // Each PDP entry's JSON-LD may repeat the product's and a video's text: a bound, never an undercount.
  const copies = 1 + product.pdpUrls.length;
  const objects = 1 + product.properties.length + product.videos.length + product.pdpUrls.length * 4;
  const ceiling = textLength(product, publisherName) * copies * BYTES_PER_CHARACTER + objects * BYTES_PER_OBJECT;
  if (ceiling <= MAX_ANSWER_BYTES) return null;
  const ids = {
    product: Number.MAX_SAFE_INTEGER,
    videos: product.videos.map(() => Number.MAX_SAFE_INTEGER),
    pdpUrls: product.pdpUrls.map(() => Number.MAX_SAFE_INTEGER),
  };
  const bytes = Buffer.byteLength(JSON.stringify(toLookupResult(product, ids, publisherName)));
  return bytes > MAX_ANSWER_BYTES ? bytes : null;
}

/** Characters of every string the product holds, and its publisher's name. */
export function textLength(product: Product, publisherName: string): number {
  let length = publisherName.length;
  const add = (...texts: readonly (string | null)[]): void => {
    for (const text of texts) length += text?.length ?? 0;
  };
  add(product.sku, product.title, product.description, product.shortDescription, product.image, product.whatText, product.whoText, product.whyText, product.brand);
  for (const property of product.properties) add(property.name, property.value);
  for (const video of product.videos) {
    add(video.ref, video.name, video.description, video.aspectRatio, video.language, video.transcript, video.thumbnailUrl, video.uploadDate, video.creator.name, video.creator.jobTitle);
    add(...video.genre, ...video.keywords);
  }
  for (const entry of product.pdpUrls) add(entry.pdpUrl, entry.retailer, entry.videoRef, entry.videoFileUrl);
  return length;
}
