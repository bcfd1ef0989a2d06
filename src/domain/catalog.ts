import type { KeyMode } from './api-key.js';

/** The catalog as the service holds it: one partner's products, their videos and PDP entries. */

export type ProductStatus = 'active' | 'inactive';

export interface Creator {
  readonly name: string;
  readonly jobTitle: string;
}

export interface ProductProperty {
  readonly name: string;
  readonly value: string;
}

export interface Video {
  readonly ref: string;
  readonly published: boolean;
  readonly name: string | null;
  readonly description: string | null;
  readonly aspectRatio: string;
  readonly length: number;
  readonly language: string;
  readonly familyFriendly: boolean;
  readonly genre: readonly string[];
  readonly keywords: readonly string[];
  readonly creator: Creator;
  readonly transcript: string | null;
  /** An absolute http(s) URL of a still of the video. */
  readonly thumbnailUrl: string | null;
  /** An ISO 8601 date or date-time with an offset, kept as the catalog wrote it. */
  readonly uploadDate: string | null;
}

export interface PdpEntry {
  readonly pdpUrl: string;
  readonly retailer: string | null;
  readonly videoRef: string | null;
  readonly videoFileUrl: string | null;
}

export interface Product {
  readonly sku: string;
  readonly status: ProductStatus;
  readonly title: string;
  readonly description: string | null;
  readonly shortDescription: string;
  readonly image: string;
  readonly whatText: string;
  readonly whoText: string;
  readonly whyText: string;
  readonly brand: string;
  readonly properties: readonly ProductProperty[];
  readonly videos: readonly Video[];
  readonly pdpUrls: readonly PdpEntry[];
}

export interface ApiKeyRecord {
  readonly id: string;
  /** Stated by the file (live unless it says test): a key is accepted only with its mode's prefix. */
  readonly mode: KeyMode;
  readonly sha256: string;
  readonly revoked: boolean;
}

export interface Partner {
  readonly id: string;
  readonly name: string;
  readonly apiKeys: readonly ApiKeyRecord[];
  readonly products: readonly Product[];
  /** What its test keys read; null when the file gives no sandbox, and the bundled demo products stand in. */
  readonly sandbox: readonly Product[] | null;
}

/** A whole `partner-catalog/v1` document, validated. */
export interface Catalog {
  readonly partners: readonly Partner[];
}
