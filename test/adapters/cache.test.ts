import { expect } from 'chai';
import { ANSWER_OVERHEAD_BYTES, CachedProductCatalog, heldBytes, MISS_BYTES, withResponseCache } from '../../src/adapters/cache/cached-product-catalog.js';
import { PrometheusMetrics } from '../../src/adapters/metrics/prometheus-metrics.js';
import { MemoryProductCatalog } from '../support/memory-product-catalog.js';
import { ChangesElsewhere } from '../../src/application/instances/changes-elsewhere.js';
import type { ProductCatalog } from '../../src/application/lookup/product-catalog.js';
import type { LookupAnswer } from '../../src/domain/lookup-answer.js';
import type { ProductId } from '../../src/domain/product-id.js';
import type { Sku } from '../../src/domain/sku.js';
import { productCatalogContract } from '../contracts/product-catalog.contract.js';
import { parseCatalogSource } from '../../src/domain/catalog-source.js';
import { fixtureCatalog, fixtureDocument } from '../fixtures/catalog-fixture.js';
import { MAX_DISPLACEMENT } from '../../src/adapters/cache/answer-ring.js';
import { fnvCollidingSkus, fnvSlot, randomSkus } from '../support/hash-flood.js';

const sku = (s: string): Sku => s as Sku;

/** The bytes the cache counts an answer of the fixture for: from the body a lookup of it sends. */
async function heldBytesOf(partnerId: string, s: string): Promise<number> {
  const answer = await new MemoryProductCatalog(fixtureCatalog()).findBySku(partnerId, sku(s));
  return heldBytes(answer!.body.length);
}

/** A figure of the metrics as scraped, by its labels. */
async function scraped(metrics: PrometheusMetrics, name: string): Promise<Record<string, number>> {
  const found = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return Object.fromEntries((found?.values ?? []).map((v) => [Object.values(v.labels).join(','), v.value]));
}

/** The memory catalog, counting the lookups that reach it and what batches ask of it; `fail` makes the next one throw. */
class CountingCatalog implements ProductCatalog {
  calls = 0;
  fail = false;
  /** The values of each batch read, in order. */
  readonly batches: (readonly (string | number)[])[] = [];
  constructor(private readonly inner: ProductCatalog) {}
  findBySku(partnerId: string, s: Sku): Promise<LookupAnswer | null> {
    return this.count(() => this.inner.findBySku(partnerId, s));
  }
  findById(partnerId: string, id: ProductId): Promise<LookupAnswer | null> {
    return this.count(() => this.inner.findById(partnerId, id));
  }
  findManyBySku(partnerId: string, skus: readonly Sku[]): Promise<(LookupAnswer | null)[]> {
    this.batches.push(skus);
    return this.count(() => this.inner.findManyBySku(partnerId, skus));
  }
  findManyById(partnerId: string, ids: readonly ProductId[]): Promise<(LookupAnswer | null)[]> {
    this.batches.push(ids);
    return this.count(() => this.inner.findManyById(partnerId, ids));
  }
  private count<T>(lookup: () => Promise<T>): Promise<T> {
    this.calls += 1;
    if (this.fail) {
      this.fail = false;
      return Promise.reject(new Error('storage down'));
    }
    return lookup();
  }
}

const titles = (answers: readonly (LookupAnswer | null)[]): (string | null)[] => answers.map((answer) => answer?.result.product.title ?? null);

productCatalogContract('memory behind the response cache', (catalog) =>
  Promise.resolve({ catalog: new CachedProductCatalog(new MemoryProductCatalog(catalog), { ttlMs: 60_000 }), close: () => Promise.resolve() }));

describe('response cache', function () {
  let backing: CountingCatalog;
  beforeEach(function () {
    backing = new CountingCatalog(new MemoryProductCatalog(fixtureCatalog()));
  });

  it('answers a repeated lookup from memory, by SKU and by ID', async function () {
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000 });
    const first = await cache.findBySku('acme', sku('TENT-2P'));
    const again = await cache.findBySku('acme', sku('TENT-2P'));
    expect([again!.body, again!.etag]).to.deep.equal([first!.body, first!.etag]);
    expect(backing.calls).to.equal(1);
    const id = first!.result.product.id as ProductId;
    await cache.findById('acme', id);
    await cache.findById('acme', id);
    expect(backing.calls).to.equal(2);
  });

  it('never hands one partner the answer cached for another, nor a SKU the answer of another case', async function () {
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000 });
    expect((await cache.findBySku('acme', sku('SHARED-1')))?.result.product.title).to.equal('Acme shared');
    expect((await cache.findBySku('globex', sku('SHARED-1')))?.result.product.title).to.equal('Globex shared');
    expect(await cache.findBySku('nobody', sku('SHARED-1'))).to.equal(null);
    expect((await cache.findBySku('acme', sku('ABC-1')))?.result.product.title).to.equal('Upper-case ABC');
    expect((await cache.findBySku('acme', sku('abc-1')))?.result.product.title).to.equal('Title abc-1');
    const acmeId = (await cache.findBySku('acme', sku('TENT-2P')))!.result.product.id as ProductId;
    expect(await cache.findById('acme', acmeId)).to.not.equal(null);
    expect(await cache.findById('globex', acmeId)).to.equal(null);
  });

  it('remembers a miss for the TTL, then asks again', async function () {
    let now = 0;
    const cache = new CachedProductCatalog(backing, { ttlMs: 100, now: () => now });
    expect(await cache.findBySku('acme', sku('NOPE'))).to.equal(null);
    now = 100;
    expect(await cache.findBySku('acme', sku('NOPE'))).to.equal(null);
    expect(backing.calls).to.equal(1);
    now = 101;
    await cache.findBySku('acme', sku('NOPE'));
    expect(backing.calls).to.equal(2);
  });

  it('never caches a failure', async function () {
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000 });
    backing.fail = true;
    let failed = false;
    await cache.findBySku('acme', sku('TENT-2P')).catch(() => (failed = true));
    expect(failed).to.equal(true);
    expect(await cache.findBySku('acme', sku('TENT-2P'))).to.not.equal(null);
  });

  it('holds at most maxEntries answers', async function () {
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000, maxEntries: 2 });
    for (const s of ['TENT-2P', 'abc-1', 'ABC-1']) await cache.findBySku('acme', sku(s));
    await cache.findBySku('acme', sku('TENT-2P'));
    expect(backing.calls).to.equal(4);
    expect(cache.entries).to.equal(2);
  });

  it('holds answers up to maxBytes, evicting the one held longest unless a partner would hold more than half, and says how many bytes they take', async function () {
    // The fixture's biggest answers: TENT-2P's body is 3,026 bytes, globex's SHARED-1 1,430, abc-1 282.
    const [tent, shared, small] = [await heldBytesOf('acme', 'TENT-2P'), await heldBytesOf('globex', 'SHARED-1'), await heldBytesOf('acme', 'abc-1')];
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000, maxBytes: tent + shared });
    await cache.findBySku('acme', sku('TENT-2P'));
    await cache.findBySku('globex', sku('SHARED-1'));
    expect([cache.entries, cache.bytes]).to.deep.equal([2, tent + shared]);
    // No room for a third: the one held longest, TENT-2P, goes.
    await cache.findBySku('acme', sku('abc-1'));
    expect([cache.entries, cache.bytes]).to.deep.equal([2, shared + small]);
    expect(backing.calls).to.equal(3);
    await cache.findBySku('acme', sku('abc-1'));
    expect(backing.calls).to.equal(3);
    // The hit kept its copy, counted for the body's bytes (the held bytes less the 1,000 each is counted for besides).
    const smallCopy = small - ANSWER_OVERHEAD_BYTES;
    expect(cache.bytes).to.equal(shared + small + smallCopy);
    // TENT-2P is read again: with it acme would hold more than half the bound (its share), so acme's
    // own abc-1 makes room for it, not SHARED-1, though that one is held longest.
    await cache.findBySku('acme', sku('TENT-2P'));
    expect(backing.calls).to.equal(4);
    expect([cache.entries, cache.bytes]).to.deep.equal([2, shared + tent]);
    await cache.findBySku('globex', sku('SHARED-1'));
    expect(backing.calls).to.equal(4);
    // acme, holding more than its share with TENT-2P, makes room for its abc-1 from its own again.
    await cache.findBySku('acme', sku('abc-1'));
    expect([cache.entries, cache.bytes]).to.deep.equal([2, shared + small]);
  });

  it('never holds an answer bigger than maxBytes, and still remembers misses', async function () {
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000, maxBytes: (await heldBytesOf('acme', 'TENT-2P')) - 1 });
    await cache.findBySku('acme', sku('TENT-2P'));
    await cache.findBySku('acme', sku('TENT-2P'));
    expect(backing.calls).to.equal(2);
    await cache.findBySku('acme', sku('NOPE'));
    await cache.findBySku('acme', sku('NOPE'));
    expect(backing.calls).to.equal(3);
    expect([cache.entries, cache.bytes]).to.deep.equal([1, MISS_BYTES]);
  });

  it('holds at most maxEntries answers however much room maxBytes leaves', async function () {
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000, maxEntries: 2, maxBytes: 1024 * 1024 * 1024 });
    for (const s of ['TENT-2P', 'abc-1', 'ABC-1']) await cache.findBySku('acme', sku(s));
    expect([cache.entries, cache.bytes]).to.deep.equal([2, (await heldBytesOf('acme', 'abc-1')) + (await heldBytesOf('acme', 'ABC-1'))]);
  });

  it('sizes an answer once, when it is stored, by the body it answers with, and its kept copy once, by the same body', async function () {
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000 });
    for (let i = 0; i < 5; i += 1) await cache.findBySku('acme', sku('TENT-2P'));
    await cache.findBySku('acme', sku('NOPE'));
    const tent = await heldBytesOf('acme', 'TENT-2P');
    expect(cache.bytes).to.equal(tent + (tent - ANSWER_OVERHEAD_BYTES) + MISS_BYTES);
  });

  it('moves the hit and miss counters and the entries and bytes gauges as lookups go through it', async function () {
    const metrics = new PrometheusMetrics();
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000, metrics, maxBytes: await heldBytesOf('acme', 'TENT-2P') });
    metrics.watchResponseCache(cache);
    expect(await scraped(metrics, 'pcat_response_cache_lookups_total')).to.deep.equal({ hit: 0, miss: 0 });
    await cache.findBySku('acme', sku('TENT-2P'));
    await cache.findBySku('acme', sku('TENT-2P'));
    await cache.findBySku('acme', sku('TENT-2P'));
    expect(await scraped(metrics, 'pcat_response_cache_lookups_total')).to.deep.equal({ hit: 2, miss: 1 });
    expect(await scraped(metrics, 'pcat_response_cache_entries')).to.deep.equal({ '': 1 });
    expect(await scraped(metrics, 'pcat_response_cache_bytes')).to.deep.equal({ '': await heldBytesOf('acme', 'TENT-2P') });
    // A miss remembered takes TENT-2P's place: the bound holds both only without it.
    await cache.findBySku('acme', sku('NOPE'));
    await cache.findBySku('acme', sku('TENT-2P'));
    expect(await scraped(metrics, 'pcat_response_cache_lookups_total')).to.deep.equal({ hit: 2, miss: 3 });
    expect(await scraped(metrics, 'pcat_response_cache_entries')).to.deep.equal({ '': 1 });
    expect(await scraped(metrics, 'pcat_response_cache_bytes')).to.deep.equal({ '': await heldBytesOf('acme', 'TENT-2P') });
  });

  it('says how many answers it holds, a remembered miss included and a failure not', async function () {
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000 });
    expect(cache.entries).to.equal(0);
    await cache.findBySku('acme', sku('TENT-2P'));
    await cache.findBySku('acme', sku('TENT-2P'));
    await cache.findBySku('acme', sku('NOPE'));
    expect(cache.entries).to.equal(2);
    backing.fail = true;
    await cache.findBySku('acme', sku('abc-1')).catch(() => undefined);
    expect(cache.entries).to.equal(2);
  });

  it('shares answers frozen, so no caller can change what the next one sees', async function () {
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000 });
    const found = (await cache.findBySku('acme', sku('TENT-2P')))!.result;
    expect(Object.isFrozen(found)).to.equal(true);
    expect(Object.isFrozen(found.product.pdp_urls[0]?.json_ld)).to.equal(true);
  });

  it('shares its answers between batches and single lookups, and reads a batch\'s unheld values in one call', async function () {
    const metrics = new PrometheusMetrics();
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000, metrics });
    await cache.findBySku('acme', sku('TENT-2P'));
    const batch = await cache.findManyBySku('acme', ['abc-1', 'TENT-2P', 'NOPE', 'ABC-1'].map(sku));
    expect(titles(batch)).to.deep.equal(['Title abc-1', 'Title TENT-2P', null, 'Upper-case ABC']);
    expect(backing.batches).to.deep.equal([['abc-1', 'NOPE', 'ABC-1']]);
    for (const s of ['abc-1', 'NOPE', 'ABC-1']) await cache.findBySku('acme', sku(s));
    expect(titles(await cache.findManyBySku('acme', ['NOPE', 'abc-1'].map(sku)))).to.deep.equal([null, 'Title abc-1']);
    expect(backing.calls, 'the single lookup, then the batch; nothing since').to.equal(2);
    // Each value is one lookup of the cache: 1 single miss, 3 batch misses, then 3 + 2 hits.
    expect(await scraped(metrics, 'pcat_response_cache_lookups_total')).to.deep.equal({ hit: 6, miss: 4 });

    const tentId = batch[1]!.result.product.id as ProductId;
    const byId = await cache.findManyById('acme', [tentId, 999_999 as ProductId]);
    expect(titles(byId)).to.deep.equal(['Title TENT-2P', null]);
    const single = await cache.findById('acme', tentId);
    expect([single!.body, single!.etag]).to.deep.equal([byId[0]!.body, byId[0]!.etag]);
    expect(backing.batches.at(-1)).to.deep.equal([tentId, 999_999]);
    expect(backing.calls).to.equal(3);
  });

  it('never holds a partner\'s batch answer for another, and never caches a failed batch', async function () {
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000 });
    expect(titles(await cache.findManyBySku('acme', [sku('SHARED-1'), sku('GLOBEX-ONLY')]))).to.deep.equal(['Acme shared', null]);
    expect(titles(await cache.findManyBySku('globex', [sku('SHARED-1'), sku('GLOBEX-ONLY')]))).to.deep.equal(['Globex shared', 'Title GLOBEX-ONLY']);
    backing.fail = true;
    let failed = false;
    await cache.findManyBySku('acme', [sku('TENT-2P')]).catch(() => (failed = true));
    expect(failed).to.equal(true);
    expect(titles(await cache.findManyBySku('acme', [sku('TENT-2P')]))).to.deep.equal(['Title TENT-2P']);
    expect(backing.calls).to.equal(4);
  });

  it('is no cache at all with a TTL of 0', function () {
    expect(withResponseCache(backing, { ttlMs: 0 })).to.equal(backing);
    expect(withResponseCache(backing, { ttlMs: 1 })).to.be.instanceOf(CachedProductCatalog);
  });
});

/** The fixture after an import that renamed Acme's SHARED-1. */
function reimportedCatalog(): MemoryProductCatalog {
  const document = fixtureDocument() as { partners: { id: string; products: { sku: string; title: string }[] }[] };
  document.partners.find((p) => p.id === 'acme')!.products.find((p) => p.sku === 'SHARED-1')!.title = 'Acme shared, reimported';
  return new MemoryProductCatalog(parseCatalogSource(document));
}

describe('response cache with a watch on the catalog tokens', function () {
  let live: ProductCatalog;
  let backing: CountingCatalog;
  let watch: ChangesElsewhere;
  let cache: CachedProductCatalog;
  const title = async (partnerId: string): Promise<string | undefined> => (await cache.findBySku(partnerId, sku('SHARED-1')))?.result.product.title;

  beforeEach(function () {
    live = new MemoryProductCatalog(fixtureCatalog());
    // The database behind the cache: an import replaces what it answers.
    backing = new CountingCatalog({
      findBySku: (p, s) => live.findBySku(p, s), findById: (p, id) => live.findById(p, id),
      findManyBySku: (p, skus) => live.findManyBySku(p, skus), findManyById: (p, ids) => live.findManyById(p, ids),
    });
    watch = new ChangesElsewhere();
    cache = new CachedProductCatalog(backing, { ttlMs: 60_000, watch });
    watch.catalogSeen('acme', 'acme-token-1');
    watch.catalogSeen('globex', 'globex-token-1');
  });

  it('answers from memory while the partner\'s token is unchanged', async function () {
    for (let i = 0; i < 3; i += 1) expect(await title('acme')).to.equal('Acme shared');
    watch.catalogSeen('acme', 'acme-token-1');
    expect(await title('acme')).to.equal('Acme shared');
    expect(backing.calls).to.equal(1);
  });

  it('reads again, and answers anew, from the first lookup after the partner\'s token changes', async function () {
    expect(await title('acme')).to.equal('Acme shared');
    live = reimportedCatalog();
    expect(await title('acme'), 'token unchanged: the held answer').to.equal('Acme shared');
    watch.catalogSeen('acme', 'acme-token-2');
    expect(await title('acme')).to.equal('Acme shared, reimported');
    expect(await title('acme')).to.equal('Acme shared, reimported');
    expect(backing.calls).to.equal(2);
  });

  it('never answers from what it held under a token again when that token comes back (an announcement lost in a failover)', async function () {
    expect(await title('acme')).to.equal('Acme shared');
    live = reimportedCatalog();
    watch.catalogSeen('acme', 'acme-token-2');
    expect(await title('acme')).to.equal('Acme shared, reimported');
    // The new Redis never got acme-token-2: it answers acme-token-1 again, while the database holds the import.
    watch.catalogSeen('acme', 'acme-token-1');
    expect(await title('acme'), 'read again, not the answer held under acme-token-1 before the import').to.equal('Acme shared, reimported');
    expect(backing.calls).to.equal(3);
    expect(await title('acme')).to.equal('Acme shared, reimported');
    expect(backing.calls).to.equal(3);
  });

  it('reads a batch again, in one call, from the first batch after the partner\'s token changes', async function () {
    const batch = async (): Promise<(string | null)[]> => titles(await cache.findManyBySku('acme', [sku('SHARED-1'), sku('NOPE')]));
    expect(await batch()).to.deep.equal(['Acme shared', null]);
    live = reimportedCatalog();
    expect(await batch(), 'token unchanged: the held answers').to.deep.equal(['Acme shared', null]);
    watch.catalogSeen('acme', 'acme-token-2');
    expect(await batch()).to.deep.equal(['Acme shared, reimported', null]);
    expect(await title('acme'), 'the single lookup shares it').to.equal('Acme shared, reimported');
    expect(backing.batches).to.deep.equal([['SHARED-1', 'NOPE'], ['SHARED-1', 'NOPE']]);
    expect(backing.calls).to.equal(2);
  });

  it('keeps a partner\'s answers when another partner\'s token changes', async function () {
    await title('acme');
    await title('globex');
    watch.catalogSeen('globex', 'globex-token-2');
    expect(await title('acme')).to.equal('Acme shared');
    expect(backing.calls).to.equal(2);
    expect(await title('globex')).to.equal('Globex shared');
    expect(backing.calls).to.equal(3);
  });

  it('keeps the answers it holds through a loss of the shared store, and reads again after it returns', async function () {
    await title('acme');
    watch.sharingLost();
    await title('acme');
    expect(backing.calls, 'after the loss: the answer held before it').to.equal(1);
    await title('globex');
    await title('globex');
    expect(backing.calls, 'while lost, read once and held by the TTL').to.equal(2);
    watch.sharingRegained();
    watch.catalogSeen('acme', 'acme-token-1');
    await title('acme');
    expect(backing.calls, 'after the return, the same token as before').to.equal(3);
    await title('acme');
    expect(backing.calls).to.equal(3);
  });

  it('serves an answer held through a loss no longer than its TTL', async function () {
    let now = 0;
    const shortLived = new CachedProductCatalog(backing, { ttlMs: 100, watch, now: () => now });
    await shortLived.findBySku('acme', sku('SHARED-1'));
    watch.sharingLost();
    now = 100;
    await shortLived.findBySku('acme', sku('SHARED-1'));
    expect(backing.calls).to.equal(1);
    now = 101;
    await shortLived.findBySku('acme', sku('SHARED-1'));
    expect(backing.calls, 'past its TTL, read again').to.equal(2);
  });

  it('reads a partner\'s answers from the database after a read of its token was given up, until a token is seen again', async function () {
    await title('acme');
    await title('globex');
    watch.versionsMissed('acme');
    live = reimportedCatalog();
    expect(await title('acme'), 'an import it may have missed').to.equal('Acme shared, reimported');
    expect(await title('acme')).to.equal('Acme shared, reimported');
    expect(backing.calls, 'neither read held').to.equal(4);
    expect(await title('globex')).to.equal('Globex shared');
    expect(backing.calls, 'another partner\'s answers still held').to.equal(4);
    watch.catalogSeen('acme', 'acme-token-2');
    await title('acme');
    await title('acme');
    expect(backing.calls, 'held again under the token seen').to.equal(5);
  });

  it('holds nothing for a partner whose token is not seen yet while sharing', async function () {
    for (let i = 0; i < 3; i += 1) expect(await cache.findBySku('nobody', sku('SHARED-1'))).to.equal(null);
    expect(backing.calls).to.equal(3);
    watch.sharingLost();
    watch.sharingRegained();
    for (let i = 0; i < 2; i += 1) expect(await title('acme')).to.equal('Acme shared');
    expect(backing.calls, 'acme\'s token forgotten on the return').to.equal(5);
  });
});

describe('response cache under one partner\'s flood', function () {
  /** A catalog that knows the fixture's products, and nothing of the attacker's SKUs: every one a miss, remembered. */
  const attacker = 'mallory';
  /** The key prefix the cache put an attacker's SKU lookups under on MySQL storage without Redis (no catalog token): partner id, NUL, kind. */
  const attackerPrefix = `${attacker}\u0000s`;

  /** Looks the SKUs up as the attack did: batches of 100, each SKU a remembered miss. */
  async function flood(cache: CachedProductCatalog, skus: readonly string[]): Promise<void> {
    for (let at = 0; at < skus.length; at += 100) await cache.findManyBySku(attacker, skus.slice(at, at + 100).map(sku));
  }

  it('finds a key at the same cost whatever SKUs a partner chose: 40,000 made to share a slot of the old table cost as random ones do', async function () {
    this.timeout(60_000);
    const count = 40_000;
    // 40,000 entries make a table of 2^17 slots; the SKUs are made for tables of up to 2^18.
    const colliding = fnvCollidingSkus(attackerPrefix, count, 18);
    // The attack tool is sound: in the old table every one of them fell in one slot, and finding one walked 20,000 on average.
    expect(new Set(colliding.map((s) => fnvSlot(attackerPrefix + s, 17))).size).to.equal(1);
    const figures = [];
    for (const skus of [colliding, randomSkus(count)]) {
      const backing = new CountingCatalog(new MemoryProductCatalog(fixtureCatalog()));
      const cache = new CachedProductCatalog(backing, { ttlMs: 60_000 });
      // Another partner's answers, held before the flood and asked for after it.
      const victims = ['TENT-2P', 'abc-1', 'ABC-1'];
      for (const s of victims) await cache.findBySku('acme', sku(s));
      await flood(cache, skus);
      expect(cache.entries).to.equal(count + victims.length);
      const calls = backing.calls;
      for (const s of victims) await cache.findBySku('acme', sku(s));
      expect(backing.calls, 'the other partner\'s answers, from memory').to.equal(calls);
      figures.push(cache.keyTableFigures());
    }
    const [flooded, random] = figures as [ReturnType<CachedProductCatalog['keyTableFigures']>, ReturnType<CachedProductCatalog['keyTableFigures']>];
    expect(flooded.slots).to.equal(2 ** 17);
    expect(flooded.meanProbes, 'slots looked at to find a key held, on average').to.be.at.most(1.5 * random.meanProbes);
    expect(flooded.meanMissProbes, 'slots looked at for a key not held, on average').to.be.at.most(1.5 * random.meanMissProbes);
    expect(flooded.mostProbes).to.be.at.most(MAX_DISPLACEMENT + 1);
  });

  it('lets a partner\'s flood of distinct misses evict its own entries, and holds another partner\'s answers, by the entry bound', async function () {
    const backing = new CountingCatalog(new MemoryProductCatalog(fixtureCatalog()));
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000, maxEntries: 20_000 });
    const held = ['TENT-2P', 'abc-1', 'ABC-1'];
    for (const s of held) await cache.findBySku('acme', sku(s));
    await cache.findBySku('globex', sku('SHARED-1'));
    // Ten times the bound in distinct misses, in batches of 100: the ring goes round its pages many times.
    await flood(cache, randomSkus(200_000, 3));
    const calls = backing.calls;
    for (const s of held) await cache.findBySku('acme', sku(s));
    await cache.findBySku('globex', sku('SHARED-1'));
    expect(backing.calls, 'the other partners\' answers, all from memory').to.equal(calls);
    expect(cache.entries).to.be.at.most(20_000);
    // The flood took the room nobody else used; another partner storing more takes it back from the flood, and keeps it through more of it.
    const more = Array.from({ length: 2_000 }, (_, i) => `ACME-MISS-${i}`);
    for (const s of more) await cache.findBySku('acme', sku(s));
    await flood(cache, randomSkus(100_000, 6));
    const before = backing.calls;
    for (const s of [...held, ...more]) await cache.findBySku('acme', sku(s));
    expect(backing.calls, 'every answer acme stored since, from memory').to.equal(before);
    expect(cache.heldFor('acme').entries).to.equal(held.length + more.length);
    expect(cache.entries).to.be.at.most(20_000);
  });

  it('lets a partner\'s flood evict its own entries, and holds another partner\'s answers, by the byte bound', async function () {
    const backing = new CountingCatalog(new MemoryProductCatalog(fixtureCatalog()));
    const maxBytes = 1024 * 1024;
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000, maxBytes });
    const held = ['TENT-2P', 'abc-1', 'ABC-1'];
    for (const s of held) await cache.findBySku('acme', sku(s));
    // Some forty times the byte bound in misses.
    await flood(cache, randomSkus(80_000, 4));
    const calls = backing.calls;
    for (const s of held) await cache.findBySku('acme', sku(s));
    expect(backing.calls, 'the other partner\'s answers, all from memory').to.equal(calls);
    expect(cache.bytes).to.be.at.most(maxBytes);
  });

  it('still lets one partner alone use the whole of either bound, its oldest entry going first', async function () {
    const backing = new CountingCatalog(new MemoryProductCatalog(fixtureCatalog()));
    const cache = new CachedProductCatalog(backing, { ttlMs: 60_000, maxEntries: 1_000 });
    await flood(cache, randomSkus(5_000, 5));
    expect(cache.heldFor(attacker).entries).to.equal(1_000);
  });
});
