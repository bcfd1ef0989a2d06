import type { ChangesElsewhere } from '../../application/instances/changes-elsewhere.js';
import type { ProductCatalog } from '../../application/lookup/product-catalog.js';
import { noMetrics, type ResponseCacheMetrics } from '../service-metrics.js';
import { LookupAnswer } from '../../domain/lookup-answer.js';
import { AnswerRing, NO_SUCH_ANSWER } from './answer-ring.js';
import type { ProductId } from '../../domain/product-id.js';
import type { Sku } from '../../domain/sku.js';

export interface ResponseCacheOptions {
  /** How long an answer may be served from memory (CACHE_TTL_MS); 0 turns the cache off. */
  readonly ttlMs: number;
  /** Most answers held at once; the one held longest goes first. */
  readonly maxEntries?: number;
  /**
   * Most bytes the answers held may take, as `heldBytes` counts them; whichever bound is reached
   * first evicts the answer held longest. An answer larger than the whole bound is not held.
   */
  readonly maxBytes?: number;
  /**
   * With a shared store: answers are held under their partner's catalog token, so an import
   * announced anywhere is served from the next request on, whatever the TTL.
   */
  readonly watch?: ChangesElsewhere | undefined;
  /** Told whether each lookup was answered from memory. */
  readonly metrics?: ResponseCacheMetrics | undefined;
}

type Held = LookupAnswer | typeof NO_SUCH_ANSWER;

/*
 * What an answer is counted for, from `npm run bench:cache-bytes` (docs/decisions.md, configuration):
 * its key, ETag and body in the ring's pages, and what the ring keeps of it besides (its numbers in
 * the typed arrays and its slots in the key table), with room to spare.
 */
/** Bytes an answer is counted for besides its body's. */
export const ANSWER_OVERHEAD_BYTES = 1_000;
/**
 * Bytes a remembered miss is counted for: 127 measured with a 15-character key, 158 with 160 (a
 * partner id of 63 characters, the epoch, a catalog token of 36 and a SKU of 50 make at most 155),
 * its record and its share of the tables' room to grow included; 441 while keys were strings in a Map.
 */
export const MISS_BYTES = 512;
/** The most bytes held by default (CACHE_MAX_BYTES): docs/decisions.md, configuration. */
export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;
/** The most answers held by default (CACHE_MAX_ENTRIES). */
export const DEFAULT_MAX_ENTRIES = 200_000;

/** The bytes an answer whose body has `bodyBytes` bytes is counted for. */
export function heldBytes(bodyBytes: number): number {
  return bodyBytes + ANSWER_OVERHEAD_BYTES;
}

/**
 * Serves repeated lookups from process memory, held in an AnswerRing: the answers' bytes in a few
 * large buffers, no object per answer for the collector to trace. The key holds the partner, so one
 * partner's answer can never be served to another. Misses are cached too, so a caller probing
 * unknown SKUs costs one query per SKU.
 *
 * Without a watch, an answer lives `ttlMs`: a change shows up within the TTL. With one, the key also
 * holds the partner's catalog token as the watch last saw it, taken before the database is read:
 * an answer held under a token was read after that token was announced, so after every write
 * announced before it. A new token leaves the old answers unreachable; the TTL still bounds them.
 */
export class CachedProductCatalog implements ProductCatalog {
  private readonly answers: AnswerRing;
  private readonly watch: ChangesElsewhere | undefined;
  private readonly metrics: ResponseCacheMetrics;

  constructor(
    private readonly inner: ProductCatalog,
    options: ResponseCacheOptions,
  ) {
    this.answers = new AnswerRing({
      maxEntries: options.maxEntries ?? DEFAULT_MAX_ENTRIES, maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES, ttlMs: options.ttlMs,
      sizeOf: (bodyBytes) => (bodyBytes < 0 ? MISS_BYTES : heldBytes(bodyBytes)),
    });
    this.watch = options.watch;
    this.metrics = options.metrics ?? noMetrics;
  }

  /** Answers held now, misses and those past their TTL not yet evicted included. */
  get entries(): number {
    return this.answers.entries;
  }

  /** Bytes the answers held now are counted for (`heldBytes`), as `maxBytes` bounds them. */
  get bytes(): number {
    return this.answers.bytes;
  }

  findBySku(partnerId: string, sku: Sku): Promise<LookupAnswer | null> {
    return this.remember(partnerId, `s${sku}`, () => this.inner.findBySku(partnerId, sku));
  }

  findById(partnerId: string, id: ProductId): Promise<LookupAnswer | null> {
    return this.remember(partnerId, `i${id}`, () => this.inner.findById(partnerId, id));
  }

  findManyBySku(partnerId: string, skus: readonly Sku[]): Promise<(LookupAnswer | null)[]> {
    return this.rememberMany(partnerId, skus.map((sku) => `s${sku}`), (positions) => this.inner.findManyBySku(partnerId, positions.map((i) => skus[i]!)));
  }

  findManyById(partnerId: string, ids: readonly ProductId[]): Promise<(LookupAnswer | null)[]> {
    return this.rememberMany(partnerId, ids.map((id) => `i${id}`), (positions) => this.inner.findManyById(partnerId, positions.map((i) => ids[i]!)));
  }

  private remember(partnerId: string, what: string, load: () => Promise<LookupAnswer | null>): Promise<LookupAnswer | null> {
    const key = this.keyOf(partnerId, what);
    const cached = this.held(key);
    if (cached !== undefined) return Promise.resolve(cached === NO_SUCH_ANSWER ? null : cached);
    return key === null ? load() : this.loadAndKeep(key, load);
  }

  /** The answers held, under the same keys as the single lookups'; the rest read in one call of `load`, given their positions. */
  private async rememberMany(
    partnerId: string, whats: readonly string[], load: (positions: number[]) => Promise<(LookupAnswer | null)[]>,
  ): Promise<(LookupAnswer | null)[]> {
    const keys = whats.map((what) => this.keyOf(partnerId, what));
    const answers: (LookupAnswer | null)[] = [];
    const missing: number[] = [];
    keys.forEach((key, i) => {
      const cached = this.held(key);
      if (cached === undefined) missing.push(i);
      answers[i] = cached === undefined || cached === NO_SUCH_ANSWER ? null : cached;
    });
    if (missing.length === 0) return answers;
    const loaded = await load(missing);
    missing.forEach((position, j) => {
      const answer = loaded[j] ?? null;
      answers[position] = answer;
      const key = keys[position] ?? null;
      if (key !== null) this.keep(key, answer);
    });
    return answers;
  }

  /** What is held under the key, counted as a hit or a miss; an answer that may not be cached yet is read from the database: a miss. */
  private held(key: string | null): Held | undefined {
    const found = key === null ? undefined : this.answers.get(key);
    this.metrics.responseCacheLookup(found !== undefined);
    return found === undefined || found === NO_SUCH_ANSWER ? found : LookupAnswer.ofBody(found.body, found.etag);
  }

  private async loadAndKeep(key: string, load: () => Promise<LookupAnswer | null>): Promise<LookupAnswer | null> {
    // A failed lookup throws before anything is stored, so errors are never cached.
    const answer = await load();
    this.keep(key, answer);
    return answer;
  }

  private keep(key: string, answer: LookupAnswer | null): void {
    // Sized once, here, by the body every answer of it sends: a hit costs nothing more.
    this.answers.set(key, answer);
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
