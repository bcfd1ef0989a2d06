import type { Product, ProductStatus } from './catalog.js';
import { generateJsonLd, type VideoObjectJsonLd } from './json-ld.js';

/** The documented response shape (docs/api.md, the answer); nothing else is ever sent. */
export interface LookupResult {
  sku: string;
  status: ProductStatus;
  product: ProductView;
}

export interface ProductView {
  id: number;
  title: string;
  description: string | null;
  short_description: string;
  image: string;
  what_text: string;
  who_text: string;
  why_text: string;
  videos: VideoView[];
  pdp_urls: PdpEntryView[];
}

export interface VideoView {
  id: number;
  name: string | null;
  aspect_ratio: string;
  length: number;
}

export interface PdpEntryView {
  id: number;
  pdp_url: string;
  video_file_url: string | null;
  retailer: string | null;
  json_ld: VideoObjectJsonLd | null;
}

/** Service-assigned IDs of a product and of its videos and PDP entries, in the product's order. */
export interface ProductIds {
  readonly product: number;
  readonly videos: readonly number[];
  readonly pdpUrls: readonly number[];
}

/** Builds what a partner sees of a product: published videos only, JSON-LD per PDP entry. */
export function toLookupResult(product: Product, ids: ProductIds, publisherName: string): LookupResult {
  const videos: VideoView[] = [];
  product.videos.forEach((video, i) => {
    if (!video.published) return;
    videos.push({ id: idAt(ids.videos, i), name: video.name, aspect_ratio: video.aspectRatio, length: video.length });
  });
  return {
    sku: product.sku,
    status: product.status,
    product: {
      id: ids.product,
      title: product.title,
      description: product.description,
      short_description: product.shortDescription,
      image: product.image,
      what_text: product.whatText,
      who_text: product.whoText,
      why_text: product.whyText,
      videos,
      pdp_urls: product.pdpUrls.map((entry, i) => ({
        id: idAt(ids.pdpUrls, i),
        pdp_url: entry.pdpUrl,
        video_file_url: entry.videoFileUrl,
        retailer: entry.retailer,
        json_ld: generateJsonLd(entry, product, publisherName),
      })),
    },
  };
}

function idAt(ids: readonly number[], index: number): number {
  const id = ids[index];
  if (id === undefined) throw new RangeError(`no ID assigned at position ${index}`);
  return id;
}
