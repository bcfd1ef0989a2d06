/*
 * The response shapes of the Partner Catalog Lookup API (its OpenAPI document, /openapi.json).
 * A test in the service's repository keeps them identical to the service's own types.
 */

/** `data` of a lookup: the product as the partner sees it. */
export interface LookupResult {
  sku: string;
  /** `inactive`: deactivated in the service, still returned. */
  status: 'active' | 'inactive';
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
  /** Published videos only. */
  videos: VideoView[];
  /** One entry per retailer product page; each carries the JSON-LD for that page only. */
  pdp_urls: PdpEntryView[];
}

export interface VideoView {
  id: number;
  name: string | null;
  /** `<width>x<height>`, e.g. `16x9`. */
  aspect_ratio: string;
  /** Seconds. */
  length: number;
}

export interface PdpEntryView {
  id: number;
  pdp_url: string;
  video_file_url: string | null;
  retailer: string | null;
  /** `null` until the service has generated it. */
  json_ld: VideoObjectJsonLd | null;
}

/** The schema.org VideoObject for one retailer page, anchored to its `pdp_url`. */
export interface VideoObjectJsonLd {
  '@context': 'https://schema.org';
  '@type': 'VideoObject';
  '@id': string;
  name: string;
  description: string;
  /** Present, with `uploadDate` and `duration`, when the catalog gives the video a thumbnail and an upload date. */
  thumbnailUrl?: string;
  /** ISO 8601 date, or date-time with an offset, as the catalog gives it. */
  uploadDate?: string;
  /** ISO 8601 duration in whole seconds, such as `PT1M33S`. */
  duration?: string;
  transcript: string;
  inLanguage: string;
  isFamilyFriendly: boolean;
  contentUrl: string;
  embedUrl: string;
  genre: string[];
  keywords: string[];
  creator: { '@type': 'Person'; name: string; jobTitle: string };
  publisher: { '@type': 'Organization'; name: string };
  about: {
    '@type': 'Product';
    '@id': string;
    /** The product's title and image, present with `thumbnailUrl`. */
    name?: string;
    image?: string;
    brand: { '@type': 'Brand'; name: string };
    additionalProperty: { '@type': 'PropertyValue'; name: string; value: string }[];
  };
  isPartOf: { '@type': 'WebPage'; '@id': string; url: string };
}
