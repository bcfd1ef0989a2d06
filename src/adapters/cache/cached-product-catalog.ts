import { LRUCache } from 'lru-cache';
import type { ChangesElsewhere } from '../../application/instances/changes-elsewhere.js';
import type { ProductCatalog } from '../../application/lookup/product-catalog.js';
import { noMetrics, type ResponseCacheMetrics } from '../service-metrics.js';
import { deepFreeze } from '../../domain/deep-freeze.js';
import type { LookupResult } from '../../domain/lookup-result.js';
import type { ProductId } from '../../domain/product-id.js';
import type { Sku } from '../../domain/sku.js';

export interface ResponseCacheOptions {
  /** How long an answer may be served from memory (CACHE_TTL_MS); 0 turns the cache off. */
  readonly ttlMs: number;
  /** Most answers held at once; the least recently used goes first. */
  readonly maxEntries?: number;
  /**
   * With a shared store: answers are held under their partner's catalog token, so an import
   * announced anywhere is served from the next request on, whatever the TTL.
   */
  readonly watch?: ChangesElsewhere | undefined;
  /** Told whether each lookup was answered from memory. */
  readonly metrics?: ResponseCacheMetrics | undefined;
}

/** lru-cache holds no null, so an answer is boxed: a miss is remembered too. */
interface Answer {
  readonly result: LookupResult | null;
}

/**
 * Serves repeated lookups from process memory. The key holds the partner, so one partner's answer
 * can never be served to another. Misses are cached too, so a caller probing unknown SKUs costs one
 * query per SKU.
 *
 * Without a watch, an answer lives `ttlMs`: a change shows up within the TTL. With one, the key also
 * holds the partner's catalog token as the watch last saw it, taken before the database is read:
 * an answer held under a token was read after that token was announced, so after every write
 * announced before it. A new token leaves the old answers unreachable; the TTL still bounds them.
 */
export class CachedProductCatalog implements ProductCatalog {
  private readonly answers: LRUCache<string, Answer>;
  private readonly watch: ChangesElsewhere | undefined;
  private readonly metrics: ResponseCacheMetrics;

  constructor(
    private readonly inner: ProductCatalog,
    options: ResponseCacheOptions,
  ) {
    this.answers = new LRUCache({ max: options.maxEntries ?? 10_000, ttl: options.ttlMs });
    this.watch = options.watch;
    this.metrics = options.metrics ?? noMetrics;
  }

  /** Answers held now, misses and those past their TTL not yet evicted included. */
  get entries(): number {
    return this.answers.size;
  }

  findBySku(partnerId: string, sku: Sku): Promise<LookupResult | null> {
    return this.remember(partnerId, `s${sku}`, () => this.inner.findBySku(partnerId, sku));
  }

  findById(partnerId: string, id: ProductId): Promise<LookupResult | null> {
    return this.remember(partnerId, `i${id}`, () => this.inner.findById(partnerId, id));
  }

  private remember(partnerId: string, what: string, load: () => Promise<LookupResult | null>): Promise<LookupResult | null> {
    const key = this.keyOf(partnerId, what);
    // An answer that may not be cached yet is read from the database: a miss.
    const cached = key === null ? undefined : this.answers.get(key);
    this.metrics.responseCacheLookup(cached !== undefined);
    if (cached !== undefined) return Promise.resolve(cached.result);
    return key === null ? load() : this.loadAndKeep(key, load);
  }

  private async loadAndKeep(key: string, load: () => Promise<LookupResult | null>): Promise<LookupResult | null> {
    // A failed lookup throws before anything is stored, so errors are never cached.
    const result = deepFreeze(await load());
    this.answers.set(key, { result });
    return result;
  }

  /** Null when the answer must not be cached: sharing, but no token seen for the partner yet. */
  private keyOf(partnerId: string, what: string): string | null {
    const watch = this.watch;
    if (watch === undefined) return `${partnerId}\u0000${what}`;
    const token = watch.catalogToken(partnerId);
    if (token === undefined && watch.isShared()) return null;
    // The epoch changes whenever the shared store is lost or regained: nothing held across an
    // outage is served after it. While it is lost, answers live by the TTL alone.
    return `${partnerId}\u0000${watch.epoch}\u0000${token ?? ''}\u0000${what}`;
  }
}

/** The catalog behind a response cache, or the catalog itself when the TTL is 0. */
export function withResponseCache(catalog: ProductCatalog, options: ResponseCacheOptions): ProductCatalog {
  return options.ttlMs === 0 ? catalog : new CachedProductCatalog(catalog, options);
}
