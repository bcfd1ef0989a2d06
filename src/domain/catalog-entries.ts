import type { ApiKeyRecord, Product } from './catalog.js';
import type { ApiKeyEntry, ProductEntry } from './catalog-format.js';

/*
 * A catalog file's entries, once they met the format, as the domain holds them: camelCase names,
 * what was left out read as null, false or empty, and nothing shared with the document read.
 */

export function productOf(entry: ProductEntry): Product {
  return {
    sku: entry.sku,
    status: entry.status,
    title: entry.title,
    description: entry.description ?? null,
    shortDescription: entry.short_description,
    image: entry.image,
    whatText: entry.what_text,
    whoText: entry.who_text,
    whyText: entry.why_text,
    brand: entry.brand,
    properties: (entry.properties ?? []).map((property) => ({ name: property.name, value: property.value })),
    videos: (entry.videos ?? []).map((video) => ({
      ref: video.ref,
      published: video.published,
      name: video.name ?? null,
      description: video.description ?? null,
      aspectRatio: video.aspect_ratio,
      length: video.length,
      language: video.language,
      familyFriendly: video.family_friendly,
      genre: [...video.genre],
      keywords: [...video.keywords],
      creator: { name: video.creator.name, jobTitle: video.creator.job_title },
      transcript: video.transcript ?? null,
      thumbnailUrl: video.thumbnail_url ?? null,
      uploadDate: video.upload_date ?? null,
    })),
    pdpUrls: (entry.pdp_urls ?? []).map((pdp) => ({
      pdpUrl: pdp.pdp_url,
      retailer: pdp.retailer ?? null,
      videoRef: pdp.video_ref ?? null,
      videoFileUrl: pdp.video_file_url ?? null,
    })),
  };
}

export function apiKeyOf(entry: ApiKeyEntry): ApiKeyRecord {
  return { id: entry.id, mode: entry.mode ?? 'live', sha256: entry.sha256, revoked: entry.revoked ?? false };
}
