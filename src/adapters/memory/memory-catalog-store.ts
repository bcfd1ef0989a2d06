import type { ApiKeyStore } from '../../application/access/api-key-store.js';
import type { ChangesFeed, FeedPage } from '../../application/changes/changes-feed.js';
import type { CatalogImportSession, CatalogStore, StoredApiKey, StoredCatalog, StoredLookup, StoredPdpEntry, StoredProduct, StoredVideo } from '../../application/catalog-import/catalog-store.js';
import type { ProductCatalog } from '../../application/lookup/product-catalog.js';
import type { OutboxMessage } from '../../application/webhooks/webhook-outbox.js';
import { principalOf, type KeyMode, type Principal } from '../../domain/api-key.js';
import type { FeedEntry, ProductChange } from '../../domain/changes.js';
import { LookupAnswer } from '../../domain/lookup-answer.js';
import type { ProductId } from '../../domain/product-id.js';
import type { Sku } from '../../domain/sku.js';
import type { MemoryWebhookOutbox } from './memory-webhook-outbox.js';
import { isSandboxCatalog } from '../../domain/sandbox.js';

interface ProductRow extends StoredProduct {
  readonly partnerId: string;
}

interface VideoRow extends StoredVideo {
  readonly productId: number;
}

/** Everything the store holds. A state is never changed once published: an import works on a copy. */
interface State {
  readonly partners: Map<string, string>;
  /** Each catalog's source hash, as its last import recorded it. */
  readonly sourceHashes: Map<string, string>;
  readonly keys: Map<string, StoredApiKey>;
  readonly keysByHash: Map<string, StoredApiKey>;
  /** Partner, then SKU. */
  readonly products: Map<string, Map<string, ProductRow>>;
  readonly productsById: Map<number, ProductRow>;
  /** Partner, then ref. */
  readonly videos: Map<string, Map<string, VideoRow>>;
  /** Product, then page hash. */
  readonly entries: Map<number, Map<string, StoredPdpEntry>>;
  readonly lookups: Map<number, LookupAnswer>;
  /** Partner, then its feed: entries by SKU, in the order of their positions (a changed product moves to the end). */
  readonly feeds: Map<string, Feed>;
  readonly next: { product: number; video: number; entry: number };
}

interface Feed {
  seq: number;
  horizon: number;
  readonly entries: Map<string, FeedEntry>;
}

const emptyState = (): State => ({
  partners: new Map(), sourceHashes: new Map(), keys: new Map(), keysByHash: new Map(), products: new Map(), productsById: new Map(),
  videos: new Map(), entries: new Map(), lookups: new Map(), feeds: new Map(), next: { product: 1, video: 1, entry: 1 },
});

const copyNested = <K, L, V>(outer: Map<K, Map<L, V>>): Map<K, Map<L, V>> => new Map([...outer].map(([key, inner]) => [key, new Map(inner)]));

function copyOf(state: State): State {
  return {
    partners: new Map(state.partners), sourceHashes: new Map(state.sourceHashes), keys: new Map(state.keys), keysByHash: new Map(state.keysByHash),
    products: copyNested(state.products), productsById: new Map(state.productsById), videos: copyNested(state.videos),
    entries: copyNested(state.entries), lookups: new Map(state.lookups), next: { ...state.next },
    feeds: new Map([...state.feeds].map(([partnerId, feed]) => [partnerId, { ...feed, entries: new Map(feed.entries) }])),
  };
}

function answerBySku(state: State, partnerId: string, sku: Sku): LookupAnswer | null {
  const product = state.products.get(partnerId)?.get(sku);
  return product === undefined ? null : state.lookups.get(product.id) ?? null;
}

function answerById(state: State, partnerId: string, id: ProductId): LookupAnswer | null {
  return state.productsById.get(id)?.partnerId === partnerId ? state.lookups.get(id) ?? null : null;
}

/**
 * The whole catalog held in process, for small and demo deployments and for tests: products and
 * their answers, and the keys. An import builds the next state on a copy and publishes it in one
 * assignment, so a lookup sees the old catalog or the new one, never a mix; a failed import
 * publishes nothing. IDs follow identities across imports, as on MySQL. The webhook messages an
 * import queues go to the outbox when it publishes, and only then; without an outbox this process
 * has no endpoints, and an import queues none.
 */
export class MemoryCatalogStore implements CatalogStore, ProductCatalog, ApiKeyStore, ChangesFeed {
  private state: State = emptyState();
  private importing_: Promise<unknown> = Promise.resolve();

  constructor(private readonly outbox?: MemoryWebhookOutbox) {}

  importing<T>(work: (session: CatalogImportSession) => Promise<T>): Promise<T> {
    // Imports take turns: each starts from what the one before it published.
    const run = this.importing_.catch(() => undefined).then(async () => {
      const next = copyOf(this.state);
      const session = new MemoryImportSession(next, this.outbox);
      const result = await work(session);
      this.state = next;
      for (const message of session.messages) await this.outbox?.enqueue(message);
      return result;
    });
    this.importing_ = run;
    return run;
  }

  /** A key that is not in any catalog file (the demo's): kept across imports, as an operator's key is. */
  addKey(key: { readonly keyId: string; readonly partnerId: string; readonly mode: KeyMode; readonly sha256: string }): void {
    const stored: StoredApiKey = { id: key.keyId, partnerId: key.partnerId, mode: key.mode, sha256: key.sha256, origin: 'cli', revoked: false };
    this.state.keys.set(stored.id, stored);
    this.state.keysByHash.set(stored.sha256, stored);
  }

  /** Revokes a key at once, as an operator would; true if there was one. The next import keeps it revoked. */
  revokeKey(keyId: string): boolean {
    const key = this.state.keys.get(keyId);
    if (key === undefined) return false;
    const revoked = { ...key, revoked: true };
    this.state.keys.set(keyId, revoked);
    this.state.keysByHash.set(key.sha256, revoked);
    return true;
  }

  /** A partner of the catalog; a sandbox is stored as one, but takes no keys, admins or endpoints of its own. */
  hasPartner(partnerId: string): boolean {
    return !isSandboxCatalog(partnerId) && this.state.partners.has(partnerId);
  }

  /** A key by its id, whether from the catalog file or issued here. */
  apiKey(keyId: string): StoredApiKey | undefined {
    return this.state.keys.get(keyId);
  }

  apiKeysOf(partnerId: string): StoredApiKey[] {
    return [...this.state.keys.values()].filter((key) => key.partnerId === partnerId);
  }

  read(partnerId: string, afterSeq: number, limit: number): Promise<FeedPage> {
    const feed = this.state.feeds.get(partnerId);
    const entries: FeedEntry[] = [];
    for (const entry of feed?.entries.values() ?? []) {
      if (entries.length === limit) break;
      if (entry.seq > afterSeq) entries.push(entry);
    }
    return Promise.resolve({ entries, horizon: feed?.horizon ?? 0 });
  }

  findBySku(partnerId: string, sku: Sku): Promise<LookupAnswer | null> {
    return Promise.resolve(answerBySku(this.state, partnerId, sku));
  }

  findById(partnerId: string, id: ProductId): Promise<LookupAnswer | null> {
    return Promise.resolve(answerById(this.state, partnerId, id));
  }

  // From one state: a batch sees the catalog before an import or after it, never both.
  findManyBySku(partnerId: string, skus: readonly Sku[]): Promise<(LookupAnswer | null)[]> {
    const { state } = this;
    return Promise.resolve(skus.map((sku) => answerBySku(state, partnerId, sku)));
  }

  findManyById(partnerId: string, ids: readonly ProductId[]): Promise<(LookupAnswer | null)[]> {
    const { state } = this;
    return Promise.resolve(ids.map((id) => answerById(state, partnerId, id)));
  }

  findActiveByHash(sha256: string): Promise<Principal | null> {
    const key = this.state.keysByHash.get(sha256);
    return Promise.resolve(key === undefined || key.revoked ? null : principalOf(key.id, key.partnerId, key.mode));
  }

  isStillActive(principal: Principal): Promise<boolean> {
    const key = this.state.keys.get(principal.keyId);
    return Promise.resolve(key !== undefined && key.partnerId === principal.partnerId && key.mode === principal.mode && !key.revoked);
  }
}

class MemoryImportSession implements CatalogImportSession {
  /** Queued by the import, for the outbox once it publishes. */
  readonly messages: OutboxMessage[] = [];

  constructor(
    private readonly state: State,
    private readonly outbox: MemoryWebhookOutbox | undefined,
  ) {}

  feedPosition(partnerId: string): Promise<number> {
    return Promise.resolve(this.state.feeds.get(partnerId)?.seq ?? 0);
  }

  enabledWebhookEndpoints(partnerId: string): Promise<string[]> {
    return Promise.resolve(this.outbox?.enabledEndpoints(partnerId) ?? []);
  }

  queueWebhookMessages(messages: readonly OutboxMessage[]): Promise<void> {
    this.messages.push(...messages);
    return Promise.resolve();
  }

  catalogs(catalogIds: readonly string[], tombstonesBefore: Date): Promise<StoredCatalog[]> {
    const { state } = this;
    return Promise.resolve(catalogIds.flatMap((id) => {
      const name = state.partners.get(id);
      if (name === undefined) return [];
      let expiredTombstones = false;
      for (const entry of state.feeds.get(id)?.entries.values() ?? []) {
        if (entry.change === 'deleted' && entry.changedAt < tombstonesBefore) {
          expiredTombstones = true;
          break;
        }
      }
      return [{ id, name, sourceHash: state.sourceHashes.get(id) ?? null, expiredTombstones }];
    }));
  }

  savePartner(partnerId: string, name: string): Promise<void> {
    this.state.partners.set(partnerId, name);
    return Promise.resolve();
  }

  saveSourceHashes(rows: readonly { catalogId: string; sourceHash: string | null }[]): Promise<void> {
    for (const { catalogId, sourceHash } of rows) {
      if (sourceHash === null) this.state.sourceHashes.delete(catalogId);
      else this.state.sourceHashes.set(catalogId, sourceHash);
    }
    return Promise.resolve();
  }

  products(partnerId: string, skus: readonly string[]): Promise<StoredProduct[]> {
    const stored = this.state.products.get(partnerId);
    return Promise.resolve(skus.flatMap((sku) => stored?.get(sku) ?? []));
  }

  saveProducts(partnerId: string, rows: readonly { sku: string; contentHash: string }[]): Promise<void> {
    const { state } = this;
    const products = inner(state.products, partnerId);
    for (const row of rows) {
      const existing = products.get(row.sku);
      const id = existing?.id ?? state.next.product++;
      const saved = { id, partnerId, sku: row.sku, contentHash: row.contentHash, lookupHash: existing?.lookupHash ?? null, etag: existing?.etag ?? null };
      products.set(row.sku, saved);
      state.productsById.set(id, saved);
    }
    return Promise.resolve();
  }

  videos(partnerId: string, refs: readonly string[]): Promise<StoredVideo[]> {
    const stored = this.state.videos.get(partnerId);
    return Promise.resolve(refs.flatMap((ref) => stored?.get(ref) ?? []));
  }

  saveVideos(partnerId: string, rows: readonly { ref: string; productId: number; contentHash: string }[]): Promise<void> {
    const videos = inner(this.state.videos, partnerId);
    for (const row of rows) videos.set(row.ref, { id: videos.get(row.ref)?.id ?? this.state.next.video++, ...row });
    return Promise.resolve();
  }

  pdpEntries(productIds: readonly number[]): Promise<StoredPdpEntry[]> {
    return Promise.resolve(productIds.flatMap((id) => [...this.state.entries.get(id)?.values() ?? []]));
  }

  savePdpEntries(rows: readonly Omit<StoredPdpEntry, 'id'>[]): Promise<void> {
    for (const row of rows) {
      const entries = inner(this.state.entries, row.productId);
      entries.set(row.urlHash, { id: entries.get(row.urlHash)?.id ?? this.state.next.entry++, ...row });
    }
    return Promise.resolve();
  }

  deletePdpEntries(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return Promise.resolve();
    const gone = new Set(ids);
    for (const entries of this.state.entries.values()) {
      for (const [hash, entry] of entries) if (gone.has(entry.id)) entries.delete(hash);
    }
    return Promise.resolve();
  }

  saveLookups(partnerId: string, rows: readonly StoredLookup[], at: Date): Promise<void> {
    const { state } = this;
    for (const row of rows) {
      const product = state.productsById.get(row.productId);
      if (product === undefined) throw new Error(`no product ${row.productId} to answer for`);
      const saved = { ...product, lookupHash: row.lookupHash, etag: row.etag };
      state.productsById.set(product.id, saved);
      inner(state.products, product.partnerId).set(product.sku, saved);
      state.lookups.set(product.id, LookupAnswer.ofResult(row.lookup));
    }
    this.listInFeed(partnerId, rows.filter((row) => row.changed).map((row) => ({ sku: row.sku, productId: row.productId, change: 'upserted', etag: row.etag, changedAt: at })));
    return Promise.resolve();
  }

  productPage(partnerId: string, afterSku: string | null, limit: number): Promise<{ id: number; sku: string }[]> {
    return Promise.resolve(pageOf([...this.state.products.get(partnerId)?.values() ?? []], (row) => row.sku, afterSku, limit)
      .map((row) => ({ id: row.id, sku: row.sku })));
  }

  videoPage(partnerId: string, afterRef: string | null, limit: number): Promise<{ id: number; ref: string }[]> {
    return Promise.resolve(pageOf([...this.state.videos.get(partnerId)?.values() ?? []], (row) => row.ref, afterRef, limit)
      .map((row) => ({ id: row.id, ref: row.ref })));
  }

  deleteProducts(ids: readonly number[]): Promise<number> {
    const { state } = this;
    let entries = 0;
    for (const id of ids) {
      const product = state.productsById.get(id);
      if (product === undefined) continue;
      state.productsById.delete(id);
      state.products.get(product.partnerId)?.delete(product.sku);
      state.lookups.delete(id);
      entries += state.entries.get(id)?.size ?? 0;
      state.entries.delete(id);
      // As on MySQL, a video still under a deleted product goes with it.
      const videos = state.videos.get(product.partnerId);
      for (const [ref, video] of videos ?? []) if (video.productId === id) videos?.delete(ref);
    }
    return Promise.resolve(entries);
  }

  deleteVideos(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return Promise.resolve();
    const gone = new Set(ids);
    for (const videos of this.state.videos.values()) {
      for (const [ref, video] of videos) if (gone.has(video.id)) videos.delete(ref);
    }
    return Promise.resolve();
  }

  recordDeletions(partnerId: string, products: readonly { sku: string; productId: number }[], at: Date): Promise<void> {
    this.listInFeed(partnerId, products.map((row) => ({ ...row, change: 'deleted', etag: null, changedAt: at })));
    return Promise.resolve();
  }

  /** Each change at the partner's next position; a product's earlier entry gives way to its new one. */
  private listInFeed(partnerId: string, changes: readonly ProductChange[]): void {
    let feed = this.state.feeds.get(partnerId);
    if (feed === undefined) {
      feed = { seq: 0, horizon: 0, entries: new Map() };
      this.state.feeds.set(partnerId, feed);
    }
    for (const change of changes) {
      feed.entries.delete(change.sku);
      feed.entries.set(change.sku, { ...change, seq: (feed.seq += 1) });
    }
  }

  dropTombstones(partnerId: string, before: Date): Promise<void> {
    const feed = this.state.feeds.get(partnerId);
    for (const [sku, entry] of feed?.entries ?? []) {
      if (entry.change === 'deleted' && entry.changedAt < before) {
        feed!.entries.delete(sku);
        feed!.horizon = Math.max(feed!.horizon, entry.seq);
      }
    }
    return Promise.resolve();
  }

  apiKeys(partnerIds: readonly string[], keyIds: readonly string[]): Promise<StoredApiKey[]> {
    const partners = new Set(partnerIds);
    const ids = new Set(keyIds);
    return Promise.resolve([...this.state.keys.values()].filter((key) => ids.has(key.id) || (key.origin === 'catalog' && partners.has(key.partnerId))));
  }

  saveApiKeys(rows: readonly { id: string; partnerId: string; mode: KeyMode; sha256: string; revoked: boolean }[]): Promise<void> {
    for (const row of rows) {
      const existing = this.state.keys.get(row.id);
      this.putKey(existing, { id: row.id, partnerId: row.partnerId, mode: row.mode, sha256: row.sha256, origin: 'catalog', revoked: existing?.revoked ?? row.revoked });
    }
    return Promise.resolve();
  }

  revokeApiKeys(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const existing = this.state.keys.get(id);
      if (existing !== undefined) this.putKey(existing, { ...existing, revoked: true });
    }
    return Promise.resolve();
  }

  private putKey(existing: StoredApiKey | undefined, key: StoredApiKey): void {
    if (existing !== undefined && this.state.keysByHash.get(existing.sha256) === existing) this.state.keysByHash.delete(existing.sha256);
    this.state.keys.set(key.id, key);
    this.state.keysByHash.set(key.sha256, key);
  }
}

function inner<K, L, V>(outer: Map<K, Map<L, V>>, key: K): Map<L, V> {
  let found = outer.get(key);
  if (found === undefined) {
    found = new Map();
    outer.set(key, found);
  }
  return found;
}

function pageOf<T>(rows: T[], identity: (row: T) => string, after: string | null, limit: number): T[] {
  return rows
    .filter((row) => after === null || identity(row) > after)
    .sort((a, b) => (identity(a) < identity(b) ? -1 : 1))
    .slice(0, limit);
}
