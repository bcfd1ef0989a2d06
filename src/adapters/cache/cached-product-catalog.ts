import { LRUCache } from 'lru-cache';
import type { ProductCatalog } from '../../application/ports/product-catalog.js';
import { deepFreeze } from '../../domain/deep-freeze.js';
import type { LookupResult } from '../../domain/lookup-result.js';
import type { ProductId } from '../../domain/product-id.js';
import type { Sku } from '../../domain/sku.js';

export interface ResponseCacheOptions {
  /** How long an answer may be served from memory (CACHE_TTL_MS); 0 turns the cache off. */
  readonly ttlMs: number;
  /** Most answers held at once; the least recently used goes first. */
  readonly maxEntries?: number;
}

/** lru-cache holds no null, so an answer is boxed: a miss is remembered too. */
interface Answer {
  readonly result: LookupResult | null;
}

/**
 * Serves repeated lookups from process memory for up to `ttlMs`. The key holds the partner,
 * so one partner's answer can never be served to another. Misses are cached for the same
 * time: a product imported a moment ago shows up within the TTL, as any change does, and a
 * caller probing unknown SKUs costs one query per SKU per TTL. API keys are never cached.
 */
export class CachedProductCatalog implements ProductCatalog {
  private readonly answers: LRUCache<string, Answer>;

  constructor(
    private readonly inner: ProductCatalog,
    options: ResponseCacheOptions,
  ) {
    this.answers = new LRUCache({ max: options.maxEntries ?? 10_000, ttl: options.ttlMs });
  }

  findBySku(partnerId: string, sku: Sku): Promise<LookupResult | null> {
    return this.remember(JSON.stringify([partnerId, 'sku', sku]), () => this.inner.findBySku(partnerId, sku));
  }

  findById(partnerId: string, id: ProductId): Promise<LookupResult | null> {
    return this.remember(JSON.stringify([partnerId, 'id', id]), () => this.inner.findById(partnerId, id));
  }

  private async remember(key: string, load: () => Promise<LookupResult | null>): Promise<LookupResult | null> {
    const cached = this.answers.get(key);
    if (cached !== undefined) return cached.result;
    // A failed lookup throws before anything is stored, so errors are never cached.
    const result = deepFreeze(await load());
    this.answers.set(key, { result });
    return result;
  }
}

/** The catalog behind a response cache, or the catalog itself when the TTL is 0. */
export function withResponseCache(catalog: ProductCatalog, options: ResponseCacheOptions): ProductCatalog {
  return options.ttlMs === 0 ? catalog : new CachedProductCatalog(catalog, options);
}

