import type { KeyMode } from '../../domain/api-key.js';
import type { LookupResult } from '../../domain/lookup-result.js';
import type { ImportMessageSession } from '../webhooks/catalog-changed-messages.js';

/**
 * What an import needs of a storage (docs/architecture.md, one import): the identities and
 * hashes of what is stored, and plain writes. Every rule of an import lives in the use case
 * (`ImportCatalog`); a storage only keeps rows by their identities, so their IDs stay stable.
 */
export interface CatalogStore {
  /**
   * Runs one import: what `work` wrote lands whole when it resolves, and none of it when it throws.
   * Imports into one store take turns; lookups see the catalog before or after, never between.
   */
  importing<T>(work: (session: CatalogImportSession) => Promise<T>): Promise<T>;
}

/** What an import reads of a catalog (a partner's, or a sandbox's) before any of its rows. */
export interface StoredCatalog {
  readonly id: string;
  readonly name: string;
  /** The hash of the source its rows were last imported from (`catalogSourceHash`); null when not known to match them. */
  readonly sourceHash: string | null;
  /** It lists deleted products older than the bound the read was given, which `dropTombstones` drops. */
  readonly expiredTombstones: boolean;
}

export interface StoredProduct {
  readonly id: number;
  readonly sku: string;
  readonly contentHash: string;
  /** Null for an answer that was built without one (by a migration): rewritten on the next import. */
  readonly lookupHash: string | null;
  /** The stored answer's ETag; null for one stored before ETags were. */
  readonly etag: string | null;
}

export interface StoredVideo {
  readonly id: number;
  readonly ref: string;
  readonly contentHash: string;
}

export interface StoredPdpEntry {
  readonly id: number;
  readonly productId: number;
  readonly urlHash: string;
  readonly contentHash: string;
  /** Hash of the stored JSON-LD's text; null when the entry has none. */
  readonly jsonLdHash: string | null;
}

export interface StoredApiKey {
  readonly id: string;
  readonly partnerId: string;
  readonly mode: KeyMode;
  readonly sha256: string;
  /** Keys listed in a catalog file, or issued by an operator. */
  readonly origin: 'catalog' | 'cli';
  readonly revoked: boolean;
}

export interface StoredLookup {
  readonly productId: number;
  readonly sku: string;
  readonly lookupHash: string;
  readonly lookup: LookupResult;
  /** `lookup` as JSON text, as a lookup serves it. */
  readonly lookupText: string;
  /** The ETag a lookup of this answer sends (`etagOf`). */
  readonly etag: string;
  /** What a lookup answers differs from the stored answer (its ETag), so the feed lists the product again. */
  readonly changed: boolean;
}

/**
 * The reads and writes of one import, inside its unit of work. Lists may be empty. The webhook
 * messages it queues are in that unit of work too: they land with the import or not at all.
 */
export interface CatalogImportSession extends ImportMessageSession {
  /** The stored catalogs of these ids, those with tombstones deleted before `tombstonesBefore` told; ids not stored are left out. */
  catalogs(catalogIds: readonly string[], tombstonesBefore: Date): Promise<StoredCatalog[]>;
  savePartner(partnerId: string, name: string): Promise<void>;
  /** Records the hash of the source each catalog's rows now are; null: not known to be any, so the next import examines it whole. */
  saveSourceHashes(rows: readonly { readonly catalogId: string; readonly sourceHash: string | null }[]): Promise<void>;

  /** The stored products of these SKUs; SKUs not stored are left out. */
  products(partnerId: string, skus: readonly string[]): Promise<StoredProduct[]>;
  /** Stores products by SKU: a stored one keeps its ID, a new one gets the next. */
  saveProducts(partnerId: string, rows: readonly { readonly sku: string; readonly contentHash: string }[]): Promise<void>;
  videos(partnerId: string, refs: readonly string[]): Promise<StoredVideo[]>;
  /** Stores videos by ref, each under its product (a video may move to another product and keep its ID). */
  saveVideos(partnerId: string, rows: readonly { readonly ref: string; readonly productId: number; readonly contentHash: string }[]): Promise<void>;
  pdpEntries(productIds: readonly number[]): Promise<StoredPdpEntry[]>;
  /** Stores PDP entries by product and page. */
  savePdpEntries(rows: readonly Omit<StoredPdpEntry, 'id'>[]): Promise<void>;
  deletePdpEntries(ids: readonly number[]): Promise<void>;
  /**
   * Stores each product's lookup answer, the document lookups return, with the hash of its sources
   * and the answer's ETag. Each `changed` one takes the partner's next feed position, changed at `at`:
   * the feed holds each product once, at its latest change.
   */
  saveLookups(partnerId: string, rows: readonly StoredLookup[], at: Date): Promise<void>;

  /** A partner's stored products with SKUs after `afterSku` (from the first when null), at most `limit`, in SKU order. */
  productPage(partnerId: string, afterSku: string | null, limit: number): Promise<{ readonly id: number; readonly sku: string }[]>;
  /** A partner's stored videos with refs after `afterRef`, at most `limit`, in ref order. */
  videoPage(partnerId: string, afterRef: string | null, limit: number): Promise<{ readonly id: number; readonly ref: string }[]>;
  /** Deletes products with their PDP entries and answers; returns how many PDP entries went with them. */
  deleteProducts(ids: readonly number[]): Promise<number>;
  deleteVideos(ids: readonly number[]): Promise<void>;

  /** Lists deleted products in the partner's feed, each at the next position, deleted at `at`. */
  recordDeletions(partnerId: string, products: readonly { readonly sku: string; readonly productId: number }[], at: Date): Promise<void>;
  /** The partner's feed position now: that of its latest change, 0 before any. */
  feedPosition(partnerId: string): Promise<number>;
  /** Drops the partner's deleted products changed before `before`; cursors from before the newest dropped expire. */
  dropTombstones(partnerId: string, before: Date): Promise<void>;

  /** Catalog keys of these partners, and keys with these ids whatever their origin. */
  apiKeys(partnerIds: readonly string[], keyIds: readonly string[]): Promise<StoredApiKey[]>;
  /**
   * Stores keys as catalog keys: a new one is created revoked if `revoked`; a stored one takes the
   * partner and hash and keeps its revocation, as a revocation is never undone.
   */
  saveApiKeys(rows: readonly { readonly id: string; readonly partnerId: string; readonly mode: KeyMode; readonly sha256: string; readonly revoked: boolean }[], at: Date): Promise<void>;
  /** Revokes the keys not yet revoked. */
  revokeApiKeys(ids: readonly string[], at: Date): Promise<void>;
}
