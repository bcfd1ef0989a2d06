import type { CatalogVersions } from '../../application/instances/catalog-versions.js';
import type { ChangesElsewhere } from '../../application/instances/changes-elsewhere.js';
import { activeSpan, runIn, traced } from '../tracing/tracing.js';
import { isStorageUnavailable } from '../../application/common/storage-unavailable.js';
import type { ProductCatalog } from '../../application/lookup/product-catalog.js';
import { noMetrics, type ResponseCacheMetrics } from '../service-metrics.js';
import { LookupAnswer } from '../../domain/lookup-answer.js';
import { AnswerRing, NO_SUCH_ANSWER, type KeyPrefix } from './answer-ring.js';
import type { ProductId } from '../../domain/product-id.js';
import type { Sku } from '../../domain/sku.js';

export interface ResponseCacheOptions {
  /** How long an answer may be served from memory (CACHE_TTL_MS); 0 turns the cache off. */
  readonly ttlMs: number;
  /** Most answers held at once; the one held longest goes first (but see the share per partner, OwnerShare). */
  readonly maxEntries?: number;
  /**
   * Most bytes the answers held may take, as `heldBytes` counts them; whichever bound is reached
   * first evicts the answer held longest, or, while a partner holds more than half of a bound, that
   * partner's own oldest. An answer larger than the whole bound is not held.
   */
  readonly maxBytes?: number;
  /**
   * With a shared store: answers are held under their partner's catalog token, so an import
   * announced anywhere is served from the next request on, whatever the TTL.
   */
  readonly watch?: ChangesElsewhere | undefined;
  /**
   * On MySQL storage: the catalogs' versions in the database, read before each answer whenever the
   * watch cannot tell what changed (no shared store, or it is lost or switching), so an import is
   * served from the next request on, whatever the TTL.
   */
  readonly versions?: CatalogVersions | undefined;
  /** Told whether each lookup was answered from memory. */
  readonly metrics?: ResponseCacheMetrics | undefined;
  /** Milliseconds on a clock that only goes forward, for the TTL (performance.now by default; a test's own to move it). */
  readonly now?: () => number;
}

type Held = LookupAnswer | typeof NO_SUCH_ANSWER;

/** What starts a token that is a catalog's version in the database, never one of the shared store's. */
const DATABASE_VERSION = 'db:';

/** What a lookup goes by: `s` a SKU, `i` an ID; the key is its kind, then the value. */
type Kind = 's' | 'i';

/** A partner's key prefixes, under the epoch and catalog token they were made for. */
interface PartnerPrefixes {
  /** The partner's number in the ring: its share of the cache is counted by it. */
  readonly owner: number;
  readonly epoch: number;
  readonly token: string | undefined;
  readonly s: KeyPrefix;
  readonly i: KeyPrefix;
}

/*
 * What an answer is counted for, from `npm run bench:cache-bytes` (docs/decisions.md, configuration):
 * its key, ETag and body in the ring's pages, and what the ring keeps of it besides (its numbers in
 * the typed arrays and its slots in the key table), with room to spare.
 */
/** Bytes an answer is counted for besides its body's. */
export const ANSWER_OVERHEAD_BYTES = 1_000;
/**
 * Bytes a remembered miss is counted for: 170 measured with a 15-character key (127 before each
 * entry had an owner and two orders to sit in; 158 then with a 160-character key: a partner id of
 * 63 characters, the epoch, a catalog token of 36 and a SKU of 50 make at most 155), its record and
 * its share of the tables' room to grow included; 441 while keys were strings in a Map.
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
 * partner's answer can never be served to another, and each partner is the ring's owner of its
 * answers, so one partner's flood of misses evicts its own answers and not the others'. Misses are cached too, so a caller probing
 * unknown SKUs costs one query per SKU.
 *
 * Without a watch or versions, an answer lives `ttlMs`: a change shows up within the TTL. With one,
 * the key also holds the partner's catalog token (by a number of this process's, made anew whenever
 * it moves), taken before the database is read: an answer held under a token was read after that
 * token was current, so after every change it stands for. The token is the one the watch last saw
 * while the shared store tells it; otherwise, with `versions`, the catalog's version read from the
 * database in the request's own turn. A new token leaves the old answers unreachable, and so does
 * the token seen before it coming back; the TTL still bounds how long an answer is held.
 */
export class CachedProductCatalog implements ProductCatalog {
  private readonly answers: AnswerRing;
  private readonly watch: ChangesElsewhere | undefined;
  private readonly versions: CatalogVersions | undefined;
  private readonly metrics: ResponseCacheMetrics;
  /** Each partner's key prefixes, made again when its epoch or token moves: a hit builds no key. */
  private readonly prefixes = new Map<string, PartnerPrefixes>();
  /**
   * How many times a partner's epoch or token has moved in this process, all partners together: the
   * prefixes hold this number, not the token, so a token value seen again (a Redis that lost the
   * announcement of the token after it, in a failover) never makes answers held before reachable again.
   */
  private generations = 0;

  constructor(
    private readonly inner: ProductCatalog,
    options: ResponseCacheOptions,
  ) {
    this.answers = new AnswerRing({
      maxEntries: options.maxEntries ?? DEFAULT_MAX_ENTRIES, maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES, ttlMs: options.ttlMs,
      ...(options.now === undefined ? {} : { now: options.now }),
      sizeOf: (bodyBytes) => (bodyBytes < 0 ? MISS_BYTES : heldBytes(bodyBytes)),
    });
    this.watch = options.watch;
    this.versions = options.versions;
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

  /** The store's pages allocated and not written yet: address space, given memory only as they are written. */
  get unwrittenPageBytes(): number {
    return this.answers.pageBytesReserved;
  }

  /** What finding a key costs in the store's key table now (AnswerRing.keyTableFigures): for tests and benches. */
  keyTableFigures(): ReturnType<AnswerRing['keyTableFigures']> {
    return this.answers.keyTableFigures();
  }

  /** What the partner's answers held now are counted for, and how many they are: for tests and benches. */
  heldFor(partnerId: string): { entries: number; bytes: number } {
    const owner = this.prefixes.get(partnerId)?.owner;
    return owner === undefined ? { entries: 0, bytes: 0 } : this.answers.heldBy(owner);
  }

  findBySku(partnerId: string, sku: Sku): Promise<LookupAnswer | null> {
    return this.remember(partnerId, 's', sku, () => this.inner.findBySku(partnerId, sku));
  }

  findById(partnerId: string, id: ProductId): Promise<LookupAnswer | null> {
    return this.remember(partnerId, 'i', String(id), () => this.inner.findById(partnerId, id));
  }

  findManyBySku(partnerId: string, skus: readonly Sku[]): Promise<(LookupAnswer | null)[]> {
    return this.rememberMany(partnerId, 's', skus, (positions) => this.inner.findManyBySku(partnerId, positions.map((i) => skus[i]!)));
  }

  findManyById(partnerId: string, ids: readonly ProductId[]): Promise<(LookupAnswer | null)[]> {
    return this.rememberMany(partnerId, 'i', ids.map(String), (positions) => this.inner.findManyById(partnerId, positions.map((i) => ids[i]!)));
  }

  private remember(partnerId: string, kind: Kind, what: string, load: () => Promise<LookupAnswer | null>): Promise<LookupAnswer | null> {
    if (activeSpan() !== undefined) return this.rememberTraced(partnerId, kind, what, load);
    if (this.readsVersions()) return this.rememberAtVersion(partnerId, kind, what, load);
    const prefix = this.prefixOf(partnerId, kind);
    const cached = this.held(prefix, what);
    if (cached !== undefined) return Promise.resolve(cached === NO_SUCH_ANSWER ? null : cached);
    return prefix === null ? load() : this.loadAndKeep(prefix, what, load);
  }

  /** `remember`, under the catalog's version read from the database first. */
  private async rememberAtVersion(partnerId: string, kind: Kind, what: string, load: () => Promise<LookupAnswer | null>): Promise<LookupAnswer | null> {
    const prefix = await this.prefixAtVersion(partnerId, kind);
    const cached = this.held(prefix, what);
    if (cached !== undefined) return cached === NO_SUCH_ANSWER ? null : cached;
    return prefix === null ? load() : this.loadAndKeep(prefix, what, load);
  }

  /**
   * `remember` for a traced request, in a span of its own: the version read, hit or miss (told to the
   * request's span too), and the load, started within the span after the version's await.
   */
  private rememberTraced(partnerId: string, kind: Kind, what: string, load: () => Promise<LookupAnswer | null>): Promise<LookupAnswer | null> {
    const request = activeSpan();
    return traced('response cache', {}, async (span) => {
      const prefix = this.readsVersions() ? await this.prefixAtVersion(partnerId, kind) : this.prefixOf(partnerId, kind);
      const cached = this.held(prefix, what);
      const outcome = cached === undefined ? 'miss' : 'hit';
      span?.setAttribute('pcat.cache', outcome);
      request?.setAttribute('pcat.cache', outcome);
      if (cached !== undefined) return cached === NO_SUCH_ANSWER ? null : cached;
      return runIn(span, () => (prefix === null ? load() : this.loadAndKeep(prefix, what, load)));
    });
  }

  /** The answers held, under the same keys as the single lookups'; the rest read in one call of `load`, given their positions. */
  private async rememberMany(
    partnerId: string, kind: Kind, whats: readonly string[], load: (positions: number[]) => Promise<(LookupAnswer | null)[]>,
  ): Promise<(LookupAnswer | null)[]> {
    // A traced request's span, taken before the version's await: the hits and misses are told to it.
    const request = activeSpan();
    const prefix = this.readsVersions() ? await this.prefixAtVersion(partnerId, kind) : this.prefixOf(partnerId, kind);
    const answers: (LookupAnswer | null)[] = [];
    const missing: number[] = [];
    whats.forEach((what, i) => {
      const cached = this.held(prefix, what);
      if (cached === undefined) missing.push(i);
      answers[i] = cached === undefined || cached === NO_SUCH_ANSWER ? null : cached;
    });
    request?.setAttributes({ 'pcat.cache.hits': whats.length - missing.length, 'pcat.cache.misses': missing.length });
    if (missing.length === 0) return answers;
    const loaded = await (request === undefined ? load(missing) : runIn(request, () => load(missing)));
    missing.forEach((position, j) => {
      const answer = loaded[j] ?? null;
      answers[position] = answer;
      if (prefix !== null) this.keep(prefix, whats[position]!, answer);
    });
    return answers;
  }

  /** What is held under the key, counted as a hit or a miss; an answer that may not be cached yet is read from the database: a miss. */
  private held(prefix: KeyPrefix | null, what: string): Held | undefined {
    const found = prefix === null ? undefined : this.answers.get(what, prefix);
    this.metrics.responseCacheLookup(found !== undefined);
    return found === undefined || found === NO_SUCH_ANSWER ? found : LookupAnswer.ofBody(found.body, found.etag);
  }

  private async loadAndKeep(prefix: KeyPrefix, what: string, load: () => Promise<LookupAnswer | null>): Promise<LookupAnswer | null> {
    // A failed lookup throws before anything is stored, so errors are never cached.
    const answer = await load();
    this.keep(prefix, what, answer);
    return answer;
  }

  private keep(prefix: KeyPrefix, what: string, answer: LookupAnswer | null): void {
    // Sized once, here, by the body every answer of it sends: a hit costs nothing more.
    this.answers.set(what, answer, prefix);
  }

  /**
   * The key prefix of a partner's lookups of a kind: the partner, then (with a watch) the number of
   * the epoch and catalog token it was made for (a new one whenever either moves), then the kind;
   * null when the answer must not be cached: sharing, but no token seen for the partner yet.
   */
  private prefixOf(partnerId: string, kind: Kind): KeyPrefix | null {
    const watch = this.watch;
    if (watch === undefined) return this.prefixesOf(partnerId, 0, undefined)[kind];
    const token = watch.catalogToken(partnerId);
    if (token === undefined && watch.isShared()) return null;
    // The epoch changes whenever the shared store is lost or regained: nothing held across an
    // outage is served after it. While it is lost, answers live by the TTL alone.
    return this.prefixesOf(partnerId, watch.epoch, token)[kind];
  }

  /** Whether the catalog's version is read from the database before an answer is served: the watch cannot tell what changed now. */
  private readsVersions(): boolean {
    return this.versions !== undefined && (this.watch === undefined || !this.watch.isShared());
  }

  /**
   * The key prefix of a partner's lookups of a kind, under the catalog's version read now from the
   * database. When the database cannot be read, the prefix last made for the partner (its answers
   * held live by their TTL alone, as nothing can change them unseen but a write this instance cannot
   * read either), or null when there is none.
   */
  private async prefixAtVersion(partnerId: string, kind: Kind): Promise<KeyPrefix | null> {
    let version: string;
    try {
      version = await this.versions!.versionOf(partnerId);
    } catch (error) {
      if (!isStorageUnavailable(error)) throw error;
      return this.prefixes.get(partnerId)?.[kind] ?? null;
    }
    return this.prefixesOf(partnerId, this.watch?.epoch ?? 0, `${DATABASE_VERSION}${version}`)[kind];
  }

  private prefixesOf(partnerId: string, epoch: number, token: string | undefined): PartnerPrefixes {
    const known = this.prefixes.get(partnerId);
    if (known !== undefined && known.epoch === epoch && known.token === token) return known;
    // With tokens, the text holds a number of this process's for the epoch and token, new each time either moves.
    this.generations += 1;
    const start = this.watch === undefined && this.versions === undefined ? `${partnerId}\u0000` : `${partnerId}\u0000${this.generations}\u0000`;
    const owner = known?.owner ?? this.prefixes.size;
    const made = { owner, epoch, token, s: this.answers.prefix(`${start}s`, owner), i: this.answers.prefix(`${start}i`, owner) };
    this.prefixes.set(partnerId, made);
    return made;
  }
}

/** The catalog behind a response cache, or the catalog itself when the TTL is 0. */
export function withResponseCache(catalog: ProductCatalog, options: ResponseCacheOptions): ProductCatalog {
  return options.ttlMs === 0 ? catalog : new CachedProductCatalog(catalog, options);
}
