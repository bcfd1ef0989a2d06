import { Type, type Static } from 'typebox';
import type { Product } from './catalog.js';
import { generateJsonLd, VideoObjectJsonLdSchema } from './json-ld.js';

/*
 * The answer's shape, declared once: the types below and the OpenAPI document's schemas (and through
 * it the client's types) all come from these declarations (docs/architecture.md, the response contract).
 */

export const VideoViewSchema = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  name: Type.Union([Type.String(), Type.Null()]),
  aspect_ratio: Type.String({ pattern: '^[1-9][0-9]*x[1-9][0-9]*$', examples: ['16x9', '9x16', '1x1'] }),
  length: Type.Number({ minimum: 0, description: 'Duration in seconds.' }),
}, { additionalProperties: false });

export const PdpEntryViewSchema = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  pdp_url: Type.String({ format: 'uri', description: 'The retailer page this entry, and its `json_ld`, belong to.' }),
  video_file_url: Type.Union([Type.String({ format: 'uri' }), Type.Null()], { description: 'Equals the `contentUrl` of the JSON-LD.' }),
  retailer: Type.Union([Type.String(), Type.Null()]),
  json_ld: Type.Union([VideoObjectJsonLdSchema, Type.Null()], {
    description: '`null` until it is generated (the entry names a published video with a transcript, and has a video file URL); regenerated whenever one of its sources changes (a transcript, a name, a thumbnail, an upload date), so re-fetch at render time or on a daily cache. `thumbnailUrl`, `uploadDate`, `duration` and `about.name`/`about.image` are present only when the catalog gives the video a thumbnail and an upload date.',
  }),
}, { additionalProperties: false });

export const ProductViewSchema = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Service-assigned; usable with `getProductById`.' }),
  title: Type.String(),
  description: Type.Union([Type.String(), Type.Null()], { description: 'Full marketing description.' }),
  short_description: Type.String({ description: 'Short summary for cards and previews.' }),
  image: Type.String({ format: 'uri', description: 'URL of the primary product image.' }),
  what_text: Type.String({ description: 'Expert copy: what the product is.' }),
  who_text: Type.String({ description: 'Expert copy: who the product is for.' }),
  why_text: Type.String({ description: 'Expert copy: why it matters.' }),
  videos: Type.Array(VideoViewSchema, { description: 'Published videos only; empty when none.' }),
  pdp_urls: Type.Array(PdpEntryViewSchema, { description: 'Retailer product-page entries; empty when none.' }),
}, { additionalProperties: false });

/** The documented response shape (docs/api.md, the answer); nothing else is ever sent. */
export const LookupResultSchema = Type.Object({
  sku: Type.String({ pattern: '^[A-Za-z0-9._-]{1,50}$', description: 'The SKU requested, or the product\'s SKU for a lookup by ID.' }),
  status: Type.Enum(['active', 'inactive'], { type: 'string', description: '`inactive`: deactivated in the service, still returned.' }),
  product: ProductViewSchema,
}, { additionalProperties: false });

export type VideoView = Static<typeof VideoViewSchema>;
export type PdpEntryView = Static<typeof PdpEntryViewSchema>;
export type ProductView = Static<typeof ProductViewSchema>;
export type LookupResult = Static<typeof LookupResultSchema>;

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
