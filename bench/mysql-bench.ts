/**
 * MySQL storage figures: import throughput, and SKU-lookup latency and throughput with the
 * response cache off, at 10,000 and at 1,000,000 products. Prints figures; asserts nothing.
 * Uses its own database on TEST_MARIADB_URL (default the machine's MariaDB) and drops it after.
 * Option: --lookups-only skips the import figures (several minutes).
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { createConnection } from 'mysql2/promise';
import type { Database } from '../src/adapters/mysql/database.js';
import { importCatalog } from '../src/adapters/mysql/import-catalog.js';
import { migrateToLatest } from '../src/adapters/mysql/migrate.js';
import { createMysqlDatabase } from '../src/adapters/mysql/mysql-database.js';
import { MysqlProductCatalog } from '../src/adapters/mysql/mysql-product-catalog.js';
import type { Catalog, Product } from '../src/domain/catalog.js';
import type { Sku } from '../src/domain/sku.js';

const SERVER_URL = process.env.TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';
const IMPORT_SIZES = [10_000, 100_000];
const LOOKUP_SIZES = [10_000, 1_000_000];
const LOOKUP_SECONDS = 5;
const CONCURRENCY = 8;
const LOOKUP_ROUNDS = 3;
const lookupsOnly = parseArgs({ options: { 'lookups-only': { type: 'boolean', default: false } } }).values['lookups-only'];

const transcript = 'Lay the footprint down first, then cross the poles and clip the body to them. '.repeat(6);

function product(i: number, variant: string): Product {
  const sku = `B-${i}`;
  return {
    sku, status: 'active', title: `Bench product ${i}`, description: 'A freestanding three-season tent for two.',
    shortDescription: 'Freestanding 2-person tent.', image: `https://img.example/${i}.jpg`,
    whatText: 'A light tent.', whoText: 'Backpackers.', whyText: 'It saves weight.', brand: 'Bench',
    properties: [{ name: 'Capacity', value: '2 people' }, { name: 'Weight', value: '2.1 kg' }],
    videos: [{
      ref: `v-${i}`, published: true, name: 'Pitching the tent', description: null, aspectRatio: '16x9', length: 92.5,
      language: 'en', familyFriendly: true, genre: ['How-to'], keywords: ['tent'],
      creator: { name: 'Dana Reyes', jobTitle: 'Gear Specialist' }, transcript: `${transcript}${variant}`,
      thumbnailUrl: null, uploadDate: null,
    }],
    pdpUrls: [
      { pdpUrl: `https://shop.example/p/${i}`, retailer: 'Shop', videoRef: `v-${i}`, videoFileUrl: `https://cdn.example/${i}.mp4` },
      { pdpUrl: `https://outlet.example/p/${i}`, retailer: null, videoRef: `v-${i}`, videoFileUrl: `https://cdn.example/${i}.mp4` },
    ],
  };
}

function catalogOf(partnerId: string, size: number, variant = ''): Catalog {
  return { partners: [{ id: partnerId, name: `Partner ${partnerId}`, apiKeys: [], products: Array.from({ length: size }, (_, i) => product(i, variant)) }] };
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await work();
  return { ms: performance.now() - start, value };
}

const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

const perSecond = (count: number, ms: number): string => Math.round((count * 1000) / ms).toLocaleString('en-US');

async function measureImports(db: Kysely<Database>): Promise<void> {
  for (const size of IMPORT_SIZES) {
    const partner = `import-${size}`;
    const first = await timed(() => importCatalog(db, catalogOf(partner, size)));
    const again = await timed(() => importCatalog(db, catalogOf(partner, size)));
    const changed = await timed(() => importCatalog(db, catalogOf(partner, size, ' Refined.')));
    print(`import ${size.toLocaleString('en-US')} products (1 video, 2 PDP entries each):`);
    print(`  first import      ${(first.ms / 1000).toFixed(1)} s  ${perSecond(size, first.ms)} products/s`);
    print(`  unchanged again   ${(again.ms / 1000).toFixed(1)} s  ${perSecond(size, again.ms)} products/s  (${again.value.pdp_entries.regenerated} regenerated)`);
    print(`  every transcript  ${(changed.ms / 1000).toFixed(1)} s  ${perSecond(size, changed.ms)} products/s  (${changed.value.pdp_entries.regenerated.toLocaleString('en-US')} regenerated)`);
  }
}

/** Copies one imported product `size` times in SQL: seeding a million through the importer would take minutes. */
async function seedBySql(db: Kysely<Database>, partnerId: string, size: number): Promise<void> {
  await importCatalog(db, catalogOf(partnerId, 1));
  const seq = sql.raw(`seq_1_to_${size - 1}`);
  await sql`insert into products (partner_id, sku, status, title, description, short_description, image, what_text, who_text, why_text, brand, properties, content_hash)
    select p.partner_id, concat('B-', s.seq), p.status, p.title, p.description, p.short_description, p.image, p.what_text, p.who_text, p.why_text, p.brand, p.properties, p.content_hash
    from products p join ${seq} s where p.partner_id = ${partnerId}`.execute(db);
  await sql`insert into videos (partner_id, ref, product_id, position, published, name, description, aspect_ratio, length, language, family_friendly, genre, keywords, creator_name, creator_job_title, transcript, content_hash)
    select v.partner_id, concat('v-', p.id), p.id, 0, v.published, v.name, v.description, v.aspect_ratio, v.length, v.language, v.family_friendly, v.genre, v.keywords, v.creator_name, v.creator_job_title, v.transcript, v.content_hash
    from products p join videos v on v.partner_id = p.partner_id and v.ref = 'v-0' where p.partner_id = ${partnerId} and p.sku <> 'B-0'`.execute(db);
  await sql`insert into pdp_entries (product_id, pdp_url_hash, position, pdp_url, retailer, video_ref, video_file_url, json_ld, json_ld_hash, content_hash)
    select p.id, sha2(concat(e.pdp_url, p.id), 256), e.position, concat(e.pdp_url, '?', p.id), e.retailer, e.video_ref, e.video_file_url, e.json_ld, e.json_ld_hash, e.content_hash
    from products p join products p0 on p0.partner_id = p.partner_id and p0.sku = 'B-0' join pdp_entries e on e.product_id = p0.id
    where p.partner_id = ${partnerId} and p.sku <> 'B-0'`.execute(db);
  // Each copy's stored lookup answer is B-0's with the copy's own SKU, IDs and URLs; in id ranges,
  // as one statement over a million rows overflows InnoDB's lock table.
  const { first, last } = await db.selectFrom('products').where('partner_id', '=', partnerId)
    .select((eb) => [eb.fn.min('id').as('first'), eb.fn.max('id').as('last')]).executeTakeFirstOrThrow();
  for (let from = first; from <= last; from += 50_000) {
    await sql`insert into product_lookups (product_id, lookup_hash, lookup)
      select p.id, null, json_set(l0.lookup, '$.sku', p.sku, '$.product.id', p.id, '$.product.videos[0].id', v.id,
        '$.product.pdp_urls[0].id', e0.id, '$.product.pdp_urls[0].pdp_url', e0.pdp_url,
        '$.product.pdp_urls[1].id', e1.id, '$.product.pdp_urls[1].pdp_url', e1.pdp_url)
      from products p join products p0 on p0.partner_id = p.partner_id and p0.sku = 'B-0'
      join product_lookups l0 on l0.product_id = p0.id
      join videos v on v.product_id = p.id
      join pdp_entries e0 on e0.product_id = p.id and e0.position = 0
      join pdp_entries e1 on e1.product_id = p.id and e1.position = 1
      where p.partner_id = ${partnerId} and p.sku <> 'B-0' and p.id between ${from} and ${from + 49_999}`.execute(db);
  }
}

interface LookupRun {
  readonly perSecond: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly misses: number;
}

async function measureLookups(db: Kysely<Database>, partnerId: string, size: number): Promise<LookupRun> {
  const catalog = new MysqlProductCatalog(db);
  const randomSku = (): Sku => `B-${Math.floor(Math.random() * size)}` as Sku;
  const latencies: number[] = [];
  const deadline = performance.now() + LOOKUP_SECONDS * 1000;
  let misses = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const start = performance.now();
      if ((await catalog.findBySku(partnerId, randomSku())) === null) misses += 1;
      latencies.push(performance.now() - start);
    }
  };
  const run = await timed(() => Promise.all(Array.from({ length: CONCURRENCY }, worker)));
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { perSecond: (latencies.length * 1000) / run.ms, p50: at(0.5), p90: at(0.9), p99: at(0.99), misses };
}

/** Both sizes in alternating rounds, so drift on a shared machine weighs on both alike; medians per size. */
async function compareSizes(db: Kysely<Database>): Promise<void> {
  // Steady state, as a server that has run a while: read what lookups read into the buffer pool, if it fits.
  const warm = await timed(async () => {
    await sql`select count(*) from products force index (products_partner_sku) where partner_id like 'lookup-%'`.execute(db);
    await sql`select sum(length(lookup)) from product_lookups`.execute(db);
  });
  print(`buffer pool warmed with the SKU index and the stored answers in ${(warm.ms / 1000).toFixed(1)} s`);
  const runs = new Map<number, LookupRun[]>(LOOKUP_SIZES.map((size) => [size, []]));
  for (let round = 0; round < LOOKUP_ROUNDS; round += 1) {
    const order = round % 2 === 0 ? LOOKUP_SIZES : [...LOOKUP_SIZES].reverse();
    for (const size of order) runs.get(size)!.push(await measureLookups(db, `lookup-${size}`, size));
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  print(`SKU lookups, cache off, ${CONCURRENCY} concurrent, ${LOOKUP_ROUNDS} alternating rounds of ${LOOKUP_SECONDS} s, medians:`);
  print('| products | lookups/s | p50 ms | p90 ms | p99 ms | not found |\n|---|---|---|---|---|---|');
  for (const size of LOOKUP_SIZES) {
    const r = runs.get(size)!;
    print(`| ${size.toLocaleString('en-US')} | ${Math.round(median(r.map((x) => x.perSecond))).toLocaleString('en-US')} | ` +
      `${median(r.map((x) => x.p50)).toFixed(2)} | ${median(r.map((x) => x.p90)).toFixed(2)} | ${median(r.map((x) => x.p99)).toFixed(2)} | ` +
      `${r.reduce((n, x) => n + x.misses, 0)} |`);
  }
  const { rows } = await sql<{ pool: number; answers: number }>`select @@innodb_buffer_pool_size div 1048576 as pool,
    (select (data_length + index_length) div 1048576 from information_schema.tables
     where table_schema = database() and table_name = 'product_lookups') as answers`.execute(db);
  print(`InnoDB buffer pool ${rows[0]?.pool} MB; stored lookup answers ${rows[0]?.answers} MB`);
  const [small, large] = LOOKUP_SIZES.map((size) => median(runs.get(size)!.map((x) => x.p50)));
  print(`p50 latency at ${LOOKUP_SIZES[1]!.toLocaleString('en-US')} products over ${LOOKUP_SIZES[0]!.toLocaleString('en-US')}: ${(large! / small!).toFixed(2)}x`);
}

async function main(): Promise<void> {
  const name = `pcat_bench_${process.pid}`;
  const server = await createConnection({ uri: SERVER_URL, connectTimeout: 2_000 });
  await server.query(`create database \`${name}\` character set utf8mb4 collate utf8mb4_bin`);
  const db = createMysqlDatabase(`${SERVER_URL.replace(/\/$/, '')}/${name}`, { queryTimeoutMs: 600_000 });
  try {
    await migrateToLatest(db);
    if (!lookupsOnly) await measureImports(db);
    for (const size of LOOKUP_SIZES) {
      const seeded = await timed(() => seedBySql(db, `lookup-${size}`, size));
      print(`seeded ${size.toLocaleString('en-US')} products in SQL in ${(seeded.ms / 1000).toFixed(1)} s`);
    }
    await compareSizes(db);
  } finally {
    await db.destroy();
    await server.query(`drop database if exists \`${name}\``);
    await server.end();
  }
}

await main();
