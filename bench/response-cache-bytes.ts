/**
 * What one answer held by the response cache really takes in memory, against what the cache counts
 * it for (`heldBytes`), and how much of a 1,000,000-product catalog's Zipf lookups a byte bound holds.
 * For each kind of answer, 20,000 lookups of distinct SKUs go through the cache, each a fresh copy
 * of the answer's stored text and ETag, as the MySQL catalog hands them; the heap and the memory outside it (the bodies' bytes) are read before
 * and after, after a full collection. `npm run bench:cache-bytes` (with --expose-gc); the full
 * `npm run bench` runs it last.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CachedProductCatalog, DEFAULT_MAX_BYTES, heldBytes } from '../src/adapters/cache/cached-product-catalog.js';
import type { ProductCatalog } from '../src/application/lookup/product-catalog.js';
import { parseCatalogSource } from '../src/domain/catalog-source.js';
import { LookupAnswer } from '../src/domain/lookup-answer.js';
import type { LookupResult } from '../src/domain/lookup-result.js';
import type { Sku } from '../src/domain/sku.js';
import { MemoryProductCatalog } from '../test/support/memory-product-catalog.js';
import { seededRandom } from '../test/support/seeded-random.js';
import { writeBenchCatalog } from './bench-catalog.js';

const ENTRIES = 20_000;
const CATALOG = 1_000_000;
const CHURN_LOOKUPS = 1_000_000;
const CHURN_BYTES = 64 * 2 ** 20;
const gc = global.gc ?? ((): never => {
  throw new Error('run with node --expose-gc');
});

function live(): number {
  gc();
  gc();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

interface Reading {
  readonly kind: string;
  readonly bodyBytes: number;
  readonly realBytes: number;
  readonly countedBytes: number;
}

/** Batches are answers held one by one, as single lookups are: only those are measured. */
const NOT_MEASURED = (): Promise<never> => Promise.reject(new Error('batches are not measured here'));

/** `ENTRIES` distinct lookups answered with fresh copies of `text` (null: remembered misses). */
async function measure(kind: string, text: string | null): Promise<Reading> {
  const catalog: ProductCatalog = {
    findBySku: () => Promise.resolve(text === null ? null : LookupAnswer.ofResultText(text)),
    findById: () => Promise.resolve(null),
    findManyBySku: NOT_MEASURED,
    findManyById: NOT_MEASURED,
  };
  const cacheOf = (): CachedProductCatalog => new CachedProductCatalog(catalog, {
    ttlMs: 3_600_000, maxEntries: ENTRIES, maxBytes: Number.MAX_SAFE_INTEGER,
  });
  const warm = cacheOf();
  for (let i = 0; i < 1_000; i += 1) await warm.findBySku('bench', `WARM-${i}` as Sku);
  // Read before the cache is made, as its ring may allocate its pages then (not for this unbounded one).
  const before = live();
  const cache = cacheOf();
  let bodyBytes = 0;
  for (let i = 0; i < ENTRIES; i += 1) {
    const answer = await cache.findBySku('bench', `BENCH-${i}` as Sku);
    if (answer !== null) bodyBytes = answer.body.length;
  }
  const realBytes = (live() - before) / ENTRIES;
  return { kind, bodyBytes, realBytes, countedBytes: cache.bytes / ENTRIES };
}

/** The bench catalog's product with its transcript `repeat` times as long: a body of about 5.3 KB at 5. */
async function benchAnswer(repeat: number): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'pcat-cache-bytes-')), 'catalog.json');
  writeBenchCatalog(file, 1, 1);
  const document = JSON.parse(readFileSync(file, 'utf8')) as { partners: { products: { videos: { transcript: string }[] }[] }[] };
  const video = document.partners[0]!.products[0]!.videos[0]!;
  video.transcript = 'Lay the footprint down first. Cross the two poles and clip the body to them, starting from the corners. '.repeat(repeat);
  return JSON.stringify((await new MemoryProductCatalog(parseCatalogSource(document)).findBySku('bench', 'BENCH-0' as Sku))!.result);
}

const golden = JSON.parse(readFileSync('test/fixtures/fixture-answers.golden.json', 'utf8')) as Record<string, LookupResult | null>;
const kinds: [string, string | null][] = [
  ...Object.entries(golden).filter(([, answer]) => answer !== null).map(([name, answer]): [string, string] => [`fixture ${name}`, JSON.stringify(answer)]),
  ['bench product (3 PDP entries, 520-character transcript)', await benchAnswer(5)],
  ['bench product, 1,560-character transcript', await benchAnswer(15)],
  ['bench product, 2,600-character transcript', await benchAnswer(25)],
  ['remembered miss', null],
];

process.stdout.write(`\nresponse cache, bytes per answer (${ENTRIES} answers each):\n| answer | body bytes | real bytes held | counted (heldBytes) | counted / real |\n|---|---|---|---|---|\n`);
for (const [kind, text] of kinds) {
  const reading = await measure(kind, text);
  process.stdout.write(`| ${kind} | ${reading.bodyBytes} | ${reading.realBytes.toFixed(0)} | ${reading.countedBytes.toFixed(0)} | ${(reading.countedBytes / reading.realBytes).toFixed(2)} |\n`);
}


/**
 * The same answers after churn: `CHURN_LOOKUPS` Zipf lookups over `CATALOG` products through a
 * `CHURN_BYTES` bound, evicting all along (bodies under 4 KB share Node's 8 KB buffer slabs, which
 * an answer still held keeps alive).
 */
async function measureChurn(kind: string, text: string): Promise<Reading> {
  const catalog: ProductCatalog = {
    findBySku: () => Promise.resolve(LookupAnswer.ofResultText(text)), findById: () => Promise.resolve(null), findManyBySku: NOT_MEASURED, findManyById: NOT_MEASURED,
  };
  // Read before the cache is made: its ring allocates its pages then, for the whole bound (those
  // never written are taken off below).
  const before = live();
  const cache = new CachedProductCatalog(catalog, {
    ttlMs: 3_600_000, maxEntries: CATALOG, maxBytes: CHURN_BYTES,
  });
  const next = seededRandom(1);
  const logH = Math.log(CATALOG) + 0.5772;
  let bodyBytes = 0;
  for (let i = 0; i < CHURN_LOOKUPS; i += 1) {
    // Zipf (s = 1) by inverting the harmonic numbers' ln n + γ.
    const rank = Math.max(1, Math.floor(Math.exp(next() * logH - 0.5772)));
    const answer = await cache.findBySku('bench', `BENCH-${rank}` as Sku);
    if (answer !== null) bodyBytes = answer.body.length;
  }
  // Pages allocated and never written take no memory (the ring may not reach every page of its bound).
  const realBytes = (live() - before - cache.unwrittenPageBytes) / cache.entries;
  return { kind, bodyBytes, realBytes, countedBytes: cache.bytes / cache.entries };
}

process.stdout.write(`\nthe same after ${CHURN_LOOKUPS} Zipf lookups over ${CATALOG} products through a ${CHURN_BYTES / 2 ** 20} MiB bound:\n| answer | body bytes | real bytes held | counted (heldBytes) | counted / real |\n|---|---|---|---|---|\n`);
for (const [kind, text] of kinds) {
  if (text === null || !/TENT-2P|520-character/.test(kind)) continue;
  const reading = await measureChurn(kind, text);
  process.stdout.write(`| ${kind} | ${reading.bodyBytes} | ${reading.realBytes.toFixed(0)} | ${reading.countedBytes.toFixed(0)} | ${(reading.countedBytes / reading.realBytes).toFixed(2)} |\n`);
}

/** H(n), the n-th harmonic number: Zipf (s = 1) over n products gives rank r the share (1/r) / H(n). */
function harmonic(n: number): number {
  let sum = 0;
  for (let r = 1; r <= n; r += 1) sum += 1 / r;
  return sum;
}
const all = harmonic(CATALOG);
process.stdout.write(`\nZipf (s = 1) over ${CATALOG} products: the share of lookups for the most asked K, and what K answers take:\n| K | share of lookups | counted MiB, 5.3 KB bodies | 11.5 KB bodies |\n|---|---|---|---|\n`);
for (const k of [10_000, 25_000, 50_000, 75_000, 100_000, 250_000]) {
  process.stdout.write(`| ${k} | ${(100 * harmonic(k) / all).toFixed(1)} % | ${(k * heldBytes(5_263) / 2 ** 20).toFixed(0)} | ${(k * heldBytes(11_503) / 2 ** 20).toFixed(0)} |\n`);
}
/** Distinct products among `lookups` Zipf lookups: no more answers than these are alive within one TTL. */
function distinct(lookups: number): number {
  let sum = 0;
  for (let r = 1; r <= CATALOG; r += 1) sum += 1 - Math.exp(-lookups / r / all);
  return sum;
}
process.stdout.write(`\nanswers alive at once with a 30 s TTL (CACHE_TTL_MS), by lookups a second:\n| lookups/s | distinct answers in 30 s | counted MiB, 5.3 KB bodies | hit share at most |\n|---|---|---|---|\n`);
for (const rate of [1_500, 3_000, 5_000, 10_000]) {
  const answers = distinct(rate * 30);
  process.stdout.write(`| ${rate} | ${answers.toFixed(0)} | ${(answers * heldBytes(5_263) / 2 ** 20).toFixed(0)} | ${(100 * (1 - answers / (rate * 30))).toFixed(1)} % |\n`);
}
process.stdout.write(`\nthe default bound, ${DEFAULT_MAX_BYTES / 2 ** 20} MiB, holds ${Math.floor(DEFAULT_MAX_BYTES / heldBytes(5_263))} answers of 5.3 KB, ${Math.floor(DEFAULT_MAX_BYTES / heldBytes(11_503))} of 11.5 KB\n`);
