/**
 * Shows that the in-process structures a stranger's traffic can grow stay bounded by configuration:
 * 1,000,000 distinct keys through the rate limiter (RATE_LIMIT_MAX_KEYS) and 1,000,000 distinct
 * lookups, each a fresh ~6 KB answer, through the response cache (CACHE_MAX_ENTRIES, CACHE_MAX_BYTES); RSS and heap
 * are read after each 100,000. Run with --expose-gc so the readings are of live memory.
 */
import { CachedProductCatalog } from '../src/adapters/cache/cached-product-catalog.js';
import { readConfig } from '../src/adapters/config/config.js';
import { MemoryRateLimiter } from '../src/adapters/memory/memory-rate-limiter.js';
import { systemClock } from '../src/application/common/clock.js';
import type { ProductCatalog } from '../src/application/lookup/product-catalog.js';
import { LookupAnswer } from '../src/domain/lookup-answer.js';
import type { LookupResult } from '../src/domain/lookup-result.js';
import type { ProductId } from '../src/domain/product-id.js';
import type { Sku } from '../src/domain/sku.js';

const DISTINCT = 1_000_000;
const config = readConfig(process.env);
const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(0);

function reading(seen: number): string {
  global.gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  return `| ${seen} | ${mb(rss)} | ${mb(heapUsed)} |\n`;
}

const limiter = new MemoryRateLimiter({ limit: 100, clock: systemClock, maxKeys: config.rateLimits.maxKeys });
process.stdout.write(`\nrate limiter, RATE_LIMIT_MAX_KEYS=${config.rateLimits.maxKeys}, ${DISTINCT} distinct keys:\n| keys seen | RSS MB | heap used MB |\n|---|---|---|\n`);
for (let i = 1; i <= DISTINCT; i += 1) {
  await limiter.consume(`key-${i}`);
  if (i % 100_000 === 0) process.stdout.write(reading(i));
}

/** Every lookup a new answer of about 6 KB, as a catalog of a million products would give, in the form the MySQL catalog hands it: its stored text and ETag. */
const filler = 'Lay the footprint down first. Cross the two poles and clip the body to them. '.repeat(70);
const answer = (sku: string, id: number): LookupResult => ({
  sku,
  status: 'active',
  product: {
    id, title: sku, description: `${sku} ${filler}`, short_description: 's', image: 'https://img.example/p.jpg',
    what_text: 'w', who_text: 'w', why_text: 'w', videos: [], pdp_urls: [],
  },
});
const stored = (result: LookupResult): LookupAnswer => LookupAnswer.ofResultText(JSON.stringify(result));
const everyProduct: ProductCatalog = {
  findBySku: (_partner: string, sku: Sku) => Promise.resolve(stored(answer(sku, 1))),
  findById: (_partner: string, id: ProductId) => Promise.resolve(stored(answer(`ID-${id}`, Number(id)))),
  findManyBySku: (_partner: string, skus: readonly Sku[]) => Promise.resolve(skus.map((sku) => stored(answer(sku, 1)))),
  findManyById: (_partner: string, ids: readonly ProductId[]) => Promise.resolve(ids.map((id) => stored(answer(`ID-${id}`, Number(id))))),
};
const cache = new CachedProductCatalog(everyProduct, { ttlMs: Math.max(config.cache.ttlMs, 1), maxEntries: config.cache.maxEntries, maxBytes: config.cache.maxBytes });
process.stdout.write(`\nresponse cache, CACHE_MAX_ENTRIES=${config.cache.maxEntries}, CACHE_MAX_BYTES=${config.cache.maxBytes}, ${DISTINCT} distinct lookups of ~6 KB answers:\n| lookups seen | RSS MB | heap used MB |\n|---|---|---|\n`);
for (let i = 1; i <= DISTINCT; i += 1) {
  await cache.findBySku('bench', `SKU-${i}` as Sku);
  if (i % 100_000 === 0) process.stdout.write(reading(i));
}
