/**
 * MySQL storage figures: imports through the CLI (time and peak RSS at 100,000 and 1,000,000
 * products), SKU-lookup latency and throughput with the response cache off, and changes-feed page
 * reads, at 10,000 and at 1,000,000 products. Prints figures; asserts nothing.
 * Uses its own database on TEST_MARIADB_URL (default the machine's MariaDB) and drops it after.
 * Options: --lookups-only skips the import figures (several minutes), --imports-only the lookup figures;
 * --baseline-dir DIR also times the CLI of another checkout on the 100,000-product file, and with
 * --compare-rounds N only compares the two on 100,000 products, in N alternating rounds.
 * --check-only runs only `cli check` on files of 100,000 and 1,000,000 products (--check-sizes N,M
 * for others), printing its time and peak RSS, and with --baseline-dir another checkout's after it
 * on the same file; it needs no database.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { createConnection } from 'mysql2/promise';
import type { Database } from '../src/adapters/mysql/database.js';
import { migrateToLatest } from '../src/adapters/mysql/migrate.js';
import { createMysqlDatabase } from '../src/adapters/mysql/mysql-database.js';
import { MysqlChangesFeed } from '../src/adapters/mysql/mysql-changes-feed.js';
import { MysqlProductCatalog } from '../src/adapters/mysql/mysql-product-catalog.js';
import type { Sku } from '../src/domain/sku.js';
import { cliImport, seedBySql, writeCatalogFile, type CliImport } from './mysql-catalog.js';

const SERVER_URL = process.env.TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';
const IMPORT_SIZES = [100_000, 1_000_000];
const LOOKUP_SIZES = [10_000, 1_000_000];
const LOOKUP_SECONDS = 5;
const CONCURRENCY = 8;
const LOOKUP_ROUNDS = 3;
const { values: options } = parseArgs({
  options: {
    'lookups-only': { type: 'boolean', default: false },
    'imports-only': { type: 'boolean', default: false },
    /** Another checkout of the service: its CLI imports the 100,000-product file too, for a ratio in the same run. */
    'baseline-dir': { type: 'string' },
    /** With --baseline-dir: only compare the two checkouts' imports of 100,000 products, in this many alternating rounds. */
    'compare-rounds': { type: 'string' },
    /** Only `cli check`'s time and peak RSS, on the file sizes of --check-sizes. */
    'check-only': { type: 'boolean', default: false },
    'check-sizes': { type: 'string', default: '100000,1000000' },
  },
});

/**
 * Runs `cli check <file>` of a checkout as its own process, its report read and counted as it comes
 * (a pipe, as an operator's terminal or file would take it); its peak RSS from GNU time.
 */
async function cliCheck(serviceDir: string, file: string): Promise<{ ms: number; peakRssMb: number; reportBytes: number; summary: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  const start = performance.now();
  const child = spawn('/usr/bin/time', ['-f', 'peak-rss-kb %M', process.execPath, '--import', 'tsx', join(serviceDir, 'src/cli.ts'), 'check', file], {
    cwd: serviceDir, env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let reportBytes = 0;
  let last = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    reportBytes += chunk.length;
    last = (last + chunk.toString()).slice(-1_000);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = await once(child, 'exit') as [number | null];
  const ms = performance.now() - start;
  const peak = /peak-rss-kb (\d+)/.exec(stderr);
  if (code !== 0 || peak === null) throw new Error(`check of ${file} failed (exit ${String(code)}): ${stderr.slice(-2_000)}`);
  return { ms, peakRssMb: Number(peak[1]) / 1024, reportBytes, summary: last.trim().split('\n').at(-1) ?? '' };
}

/** `cli check` figures on files written for the bench: time, the CLI's peak RSS, and the report's size. */
async function measureChecks(dir: string): Promise<void> {
  for (const size of options['check-sizes'].split(',').map(Number)) {
    const file = join(dir, `check-${size}.json`);
    const bytes = await writeCatalogFile(file, `check-${size}`, size);
    const line = (who: string, run: Awaited<ReturnType<typeof cliCheck>>): void =>
      print(`check ${size.toLocaleString('en-US')} products (file ${mb(bytes)}), ${who}: ${(run.ms / 1000).toFixed(1)} s, ` +
        `${perSecond(size, run.ms)} products/s, peak RSS ${Math.round(run.peakRssMb)} MB, report ${mb(run.reportBytes)}`);
    const run = await cliCheck(process.cwd(), file);
    line('this checkout', run);
    print(`  ${run.summary}`);
    if (options['baseline-dir'] !== undefined) {
      const base = await cliCheck(resolve(options['baseline-dir']), file);
      line(`baseline ${options['baseline-dir']}`, base);
      print(`  this checkout ÷ baseline: time ${(run.ms / base.ms).toFixed(2)}, peak RSS ${(run.peakRssMb / base.peakRssMb).toFixed(2)}; same report: ${String(run.reportBytes === base.reportBytes && run.summary === base.summary)}`);
    }
    await rm(file);
  }
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

const mb = (bytes: number): string => `${Math.round(bytes / 1_048_576).toLocaleString('en-US')} MB`;

/** Import figures through the CLI, on files written for the bench: time and the CLI's peak RSS. */
async function measureImports(databaseUrl: string, dir: string): Promise<void> {
  const line = (what: string, run: CliImport, size: number, extra = ''): void =>
    print(`  ${what.padEnd(18)} ${(run.ms / 1000).toFixed(1).padStart(6)} s  ${perSecond(size, run.ms).padStart(7)} products/s  peak RSS ${Math.round(run.peakRssMb)} MB${extra}`);
  for (const size of IMPORT_SIZES) {
    const partner = `import-${size}`;
    const file = join(dir, `catalog-${size}.json`);
    const bytes = await writeCatalogFile(file, partner, size);
    print(`import ${size.toLocaleString('en-US')} products (1 video, 2 PDP entries each; file ${mb(bytes)}), CLI process:`);
    const first = await cliImport(process.cwd(), databaseUrl, file);
    line('first import', first, size);
    const again = await cliImport(process.cwd(), databaseUrl, file);
    line('unchanged again', again, size, `  (${again.report.pdp_entries.regenerated} regenerated)`);
    if (size <= 100_000) {
      await writeCatalogFile(file, partner, size, ' Refined.');
      const changed = await cliImport(process.cwd(), databaseUrl, file);
      line('every transcript', changed, size, `  (${changed.report.pdp_entries.regenerated.toLocaleString('en-US')} regenerated)`);
      if (options['baseline-dir'] !== undefined) await measureBaseline(resolve(options['baseline-dir']), file, partner, size, { first, changed });
    }
    await rm(file);
  }
}

/** A database of its own, migrated by the given checkout's CLI; dropped by the returned function. */
async function scratchDatabase(serviceDir: string, label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `pcat_bench_${label}_${process.pid}`;
  const server = await createConnection({ uri: SERVER_URL, connectTimeout: 2_000 });
  await server.query(`drop database if exists \`${name}\``);
  await server.query(`create database \`${name}\` character set utf8mb4 collate utf8mb4_bin`);
  const url = `${SERVER_URL.replace(/\/$/, '')}/${name}`;
  const child = spawn(process.execPath, ['--import', 'tsx', join(serviceDir, 'src/cli.ts'), 'migrate'], { cwd: serviceDir, env: { ...process.env, DATABASE_URL: url }, stdio: 'ignore' });
  await once(child, 'exit');
  return {
    url,
    drop: async () => {
      await server.query(`drop database if exists \`${name}\``);
      await server.end();
    },
  };
}

/**
 * This checkout against another on 100,000 products, in alternating rounds on fresh databases, so
 * drift on a shared machine weighs on both alike: a first import, then every transcript changed.
 */
async function compareWithBaseline(baselineDir: string, dir: string, rounds: number): Promise<void> {
  const size = 100_000;
  const first = join(dir, 'compare-first.json');
  const changed = join(dir, 'compare-changed.json');
  await writeCatalogFile(first, 'compare', size);
  await writeCatalogFile(changed, 'compare', size, ' Refined.');
  const times = { ours: { first: [] as number[], changed: [] as number[] }, base: { first: [] as number[], changed: [] as number[] } };
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? (['ours', 'base'] as const) : (['base', 'ours'] as const);
    for (const who of order) {
      const serviceDir = who === 'ours' ? process.cwd() : baselineDir;
      const db = await scratchDatabase(serviceDir, who);
      try {
        times[who].first.push((await cliImport(serviceDir, db.url, first)).ms);
        times[who].changed.push((await cliImport(serviceDir, db.url, changed)).ms);
      } finally {
        await db.drop();
      }
      print(`  round ${round + 1} ${who}: first ${(times[who].first.at(-1)! / 1000).toFixed(1)} s, every transcript ${(times[who].changed.at(-1)! / 1000).toFixed(1)} s`);
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const what of ['first', 'changed'] as const) {
    print(`${what === 'first' ? 'first import' : 'every transcript'}, 100,000 products, median of ${rounds}: this checkout ${(median(times.ours[what]) / 1000).toFixed(1)} s, ` +
      `baseline ${(median(times.base[what]) / 1000).toFixed(1)} s, ratio ${(median(times.ours[what]) / median(times.base[what])).toFixed(3)}`);
  }
}

/** The same first import by another checkout's CLI, into a database of its own, in the same run. */
async function measureBaseline(baselineDir: string, file: string, partner: string, size: number, ours: { first: CliImport; changed: CliImport }): Promise<void> {
  await writeCatalogFile(file, partner, size);
  const name = `pcat_bench_baseline_${process.pid}`;
  const server = await createConnection({ uri: SERVER_URL, connectTimeout: 2_000 });
  await server.query(`create database \`${name}\` character set utf8mb4 collate utf8mb4_bin`);
  try {
    const url = `${SERVER_URL.replace(/\/$/, '')}/${name}`;
    const child = spawn(process.execPath, ['--import', 'tsx', join(baselineDir, 'src/cli.ts'), 'migrate'], { cwd: baselineDir, env: { ...process.env, DATABASE_URL: url }, stdio: 'ignore' });
    await once(child, 'exit');
    const base = await cliImport(baselineDir, url, file);
    print(`  baseline ${baselineDir}: first import ${(base.ms / 1000).toFixed(1)} s, peak RSS ${Math.round(base.peakRssMb)} MB; ` +
      `this checkout ÷ baseline: time ${(ours.first.ms / base.ms).toFixed(2)}, peak RSS ${(ours.first.peakRssMb / base.peakRssMb).toFixed(2)}`);
    await writeCatalogFile(file, partner, size, ' Refined.');
    const changed = await cliImport(baselineDir, url, file);
    print(`  baseline ${baselineDir}: every transcript ${(changed.ms / 1000).toFixed(1)} s; this checkout ÷ baseline: time ${(ours.changed.ms / changed.ms).toFixed(2)}`);
  } finally {
    await server.query(`drop database if exists \`${name}\``);
    await server.end();
  }
}

/** Pages of 1,000 changes from random cursors, as partners following the feed read them. */
async function measureFeedReads(db: Kysely<Database>): Promise<void> {
  const feed = new MysqlChangesFeed(db);
  const runs = new Map<number, number[]>(LOOKUP_SIZES.map((size) => [size, []]));
  for (let round = 0; round < LOOKUP_ROUNDS; round += 1) {
    for (const size of round % 2 === 0 ? LOOKUP_SIZES : [...LOOKUP_SIZES].reverse()) {
      for (let i = 0; i < 200; i += 1) {
        const after = Math.floor(Math.random() * (size - 1_000));
        const read = await timed(() => feed.read(`lookup-${size}`, after, 1_001));
        if (read.value.entries.length !== 1_001) throw new Error(`a page at ${after} of ${size} held ${read.value.entries.length}`);
        runs.get(size)!.push(read.ms);
      }
    }
  }
  const at = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.floor(q * xs.length)]!;
  print(`changes feed, pages of 1,000 from random cursors, ${LOOKUP_ROUNDS} alternating rounds of 200 reads:`);
  print('| products | p50 ms | p99 ms |\n|---|---|---|');
  for (const size of LOOKUP_SIZES) print(`| ${size.toLocaleString('en-US')} | ${at(runs.get(size)!, 0.5).toFixed(2)} | ${at(runs.get(size)!, 0.99).toFixed(2)} |`);
  const [small, large] = LOOKUP_SIZES.map((size) => at(runs.get(size)!, 0.5));
  print(`feed page p50 at ${LOOKUP_SIZES[1]!.toLocaleString('en-US')} products over ${LOOKUP_SIZES[0]!.toLocaleString('en-US')}: ${(large! / small!).toFixed(2)}x`);
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
  if (options['check-only']) {
    const dir = await mkdtemp(join(tmpdir(), 'pcat-bench-'));
    try {
      await measureChecks(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return;
  }
  const name = `pcat_bench_${process.pid}`;
  const server = await createConnection({ uri: SERVER_URL, connectTimeout: 2_000 });
  await server.query(`create database \`${name}\` character set utf8mb4 collate utf8mb4_bin`);
  const url = `${SERVER_URL.replace(/\/$/, '')}/${name}`;
  const db = createMysqlDatabase(url, { queryTimeoutMs: 600_000 });
  const dir = await mkdtemp(join(tmpdir(), 'pcat-bench-'));
  try {
    await migrateToLatest(db);
    if (options['compare-rounds'] !== undefined && options['baseline-dir'] !== undefined) {
      await compareWithBaseline(resolve(options['baseline-dir']), dir, Number(options['compare-rounds']));
      return;
    }
    if (!options['lookups-only']) await measureImports(url, dir);
    if (!options['imports-only']) {
      for (const size of LOOKUP_SIZES) {
        const seeded = await timed(() => seedBySql(db, url, dir, `lookup-${size}`, size));
        print(`seeded ${size.toLocaleString('en-US')} products in SQL in ${(seeded.ms / 1000).toFixed(1)} s`);
      }
      await compareSizes(db);
      await measureFeedReads(db);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
    await db.destroy();
    await server.query(`drop database if exists \`${name}\``);
    await server.end();
  }
}

await main();
