/**
 * Imports at the scale of many partners: a catalog file of 10,000 partners with 3 products each
 * (and a key each; no sandbox sections, so every partner's sandbox is the bundled demo), imported
 * through the CLI process as an operator imports it, into a database of the bench's own. Printed,
 * for each import after the first: the statements the CLI sent the database (counted on the wire by
 * a proxy of the bench's own: every COM_QUERY and COM_STMT_EXECUTE), its wall time, process start
 * included, and its peak RSS:
 *
 * - the whole file again, unchanged;
 * - then in alternating rounds (3 unless `--rounds`), the whole file with one product of one partner
 *   changed, and a file of that one partner alone with another of its products changed, each import
 *   changing one product; the median of each, and of the rounds' ratios of the first to the second
 *   (the goal: at most 2, docs/decisions.md, what an import does).
 *
 * With Redis (a redis-server of the bench's own, bench-redis.ts), the imports are announced, and the
 * version tokens the first round's whole-file import replaced are counted. Unless `--no-service`, a
 * service instance (MySQL storage, Redis, answers cached for an hour) serves lookups of some
 * unchanged partners before and after that import: its response cache's hits and misses
 * (docs/metrics.md) tell whether their cached answers outlived it. The database is dropped at the end.
 *
 *   npx tsx bench/scale-partners.ts [--partners 10000] [--products 3] [--rounds 3] [--no-service] [--service-dir DIR]
 *
 * `--service-dir` imports with another checkout's CLI, for a before and after; the schema is this
 * checkout's either way (an earlier version's import leaves later columns alone).
 */
import { once } from 'node:events';
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, Socket, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { catalogVersionKey, DEFAULT_VERSION_PREFIX, keysVersionKey } from '../src/adapters/redis/version-keys.js';
import { hashApiKey } from '../src/domain/api-key.js';
import { sandboxCatalogOf } from '../src/domain/sandbox.js';
import { benchKey } from './bench-catalog.js';
import { openBenchRedis, type BenchRedis } from './bench-redis.js';
import { cliImport, productDocument } from './mysql-catalog.js';
import { freePort, withServer } from './server-process.js';

const SERVER_URL = process.env.TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';
export const DEFAULT_PARTNERS = 10_000;
export const DEFAULT_PRODUCTS_PER_PARTNER = 3;
export const DEFAULT_ROUNDS = 3;
/** Unchanged partners whose lookups the service answers before and after the one-product import. */
const WATCHED_PARTNERS = 20;
const AN_HOUR_MS = '3600000';
/** MySQL client commands that run a statement: as text, and a prepared statement's run. */
const COM_QUERY = 0x03;
const COM_STMT_EXECUTE = 0x17;
const PACKET_HEADER = 4;
/** Version tokens read per MGET. */
const TOKENS_PER_READ = 1_000;

export interface ScalePartnerOptions {
  readonly partners?: number;
  readonly productsPerPartner?: number;
  readonly rounds?: number;
  /** Start a service instance and watch its response cache across the one-product import. */
  readonly service?: boolean;
  /** The checkout whose CLI imports; this one by default. */
  readonly serviceDir?: string;
}

export interface ImportCost {
  readonly statements: number;
  readonly ms: number;
  readonly peakRssMb: number;
}

export interface ScalePartnerRows {
  readonly partners: number;
  readonly productsPerPartner: number;
  readonly fileMb: number;
  readonly rounds: number;
  readonly first: ImportCost;
  readonly unchanged: ImportCost;
  /** Medians over the rounds. */
  readonly oneProductChanged: ImportCost;
  readonly onePartner: ImportCost;
  /** The medians of the rounds' whole-file (one product) cost over their one-partner cost. */
  readonly ratio: { readonly statements: number; readonly time: number };
  /** Tokens the first round's whole-file import replaced; null without Redis. */
  readonly tokens: { readonly catalogs: number; readonly of: number; readonly keySet: boolean } | null;
  /** The watched unchanged partners' lookups after the one-product import, as the service's response cache counted them; null without a service. */
  readonly cache: { readonly lookups: number; readonly hits: number; readonly misses: number; readonly changedPartnerMissed: boolean } | null;
}

const partnerId = (n: number): string => `p-${String(n).padStart(5, '0')}`;

/** A partner as the file holds it: `changed` gives each product index its title. */
function partnerDocument(n: number, products: number, changed: ReadonlyMap<number, string> = new Map()): Record<string, unknown> {
  return {
    id: partnerId(n),
    name: `Partner ${n}`,
    api_keys: [{ id: `${partnerId(n)}-live`, sha256: hashApiKey(benchKey(n)) }],
    products: Array.from({ length: products }, (_, i) => {
      const product = productDocument(i, '');
      const title = changed.get(i);
      return title === undefined ? product : { ...product, title };
    }),
  };
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[half]! : (sorted[half - 1]! + sorted[half]!) / 2;
};
const medianCost = (costs: readonly ImportCost[]): ImportCost => ({
  statements: median(costs.map((c) => c.statements)), ms: median(costs.map((c) => c.ms)), peakRssMb: median(costs.map((c) => c.peakRssMb)),
});

/** Writes the file as a stream, a partner at a time. */
async function writePartners(file: string, partners: readonly number[], products: number, changes: ReadonlyMap<number, ReadonlyMap<number, string>>): Promise<number> {
  const out = createWriteStream(file);
  const write = async (text: string): Promise<void> => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write('{"format":"partner-catalog/v1","partners":[\n');
  for (const [i, n] of partners.entries()) await write(`${i === 0 ? '' : ',\n'}${JSON.stringify(partnerDocument(n, products, changes.get(n)))}`);
  await write(']}\n');
  out.end();
  await once(out, 'finish');
  return (await stat(file)).size;
}

/** A TCP proxy in front of MariaDB that counts the statements clients send through it, as they stream by. */
async function startStatementCounter(target: { host: string; port: number }): Promise<{ port: number; statements(): number; close(): Promise<void> }> {
  let statements = 0;
  const server: Server = createServer((client) => {
    const upstream = new Socket().connect(target.port, target.host);
    // Packets: a 3-byte length and a sequence byte, then the payload; a command is the first byte of a packet of sequence 0.
    let header = Buffer.alloc(0);
    let payloadLeft = 0;
    let atPayloadStart = false;
    let sequence = 0;
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      for (let at = 0; at < chunk.length;) {
        if (payloadLeft === 0 && !atPayloadStart) {
          const need = PACKET_HEADER - header.length;
          header = Buffer.concat([header, chunk.subarray(at, at + need)]);
          at += Math.min(need, chunk.length - at);
          if (header.length < PACKET_HEADER) break;
          payloadLeft = header.readUIntLE(0, 3);
          sequence = header[3]!;
          header = Buffer.alloc(0);
          atPayloadStart = payloadLeft > 0;
          continue;
        }
        if (atPayloadStart) {
          const command = chunk[at];
          if (sequence === 0 && (command === COM_QUERY || command === COM_STMT_EXECUTE)) statements += 1;
          atPayloadStart = false;
        }
        const take = Math.min(payloadLeft, chunk.length - at);
        payloadLeft -= take;
        at += take;
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    statements: () => statements,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

/** This checkout's root. */
const OWN_DIR = fileURLToPath(new URL('..', import.meta.url));

/** Runs this checkout's `migrate` against the database, as the service it starts expects its schema. */
async function migrate(databaseUrl: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(OWN_DIR, 'src/cli.ts'), 'migrate'], { cwd: OWN_DIR, env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['ignore', 'ignore', 'inherit'] });
  const [code] = await once(child, 'exit') as [number | null];
  if (code !== 0) throw new Error(`migrate failed (exit ${String(code)})`);
}

/** Every catalog token (partners' and sandboxes'), and the key set's, as Redis holds them now. */
async function tokens(client: Redis, catalogIds: readonly string[]): Promise<{ catalogs: (string | null)[]; keys: string | null }> {
  const catalogs: (string | null)[] = [];
  for (let at = 0; at < catalogIds.length; at += TOKENS_PER_READ) {
    catalogs.push(...await client.mget(...catalogIds.slice(at, at + TOKENS_PER_READ).map((id) => catalogVersionKey(DEFAULT_VERSION_PREFIX, id))));
  }
  return { catalogs, keys: await client.get(keysVersionKey(DEFAULT_VERSION_PREFIX)) };
}

/** The service's response cache counts, from its metrics. */
async function cacheCounts(metricsUrl: string): Promise<{ hits: number; misses: number }> {
  const text = await (await fetch(metricsUrl)).text();
  const count = (result: string): number => Number(new RegExp(`^pcat_response_cache_lookups_total\\{result="${result}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { hits: count('hit'), misses: count('miss') };
}

async function lookup(base: string, n: number, sku: string): Promise<{ status: number; title: string | undefined }> {
  const response = await fetch(`${base}/api/v1/public/sku/${sku}`, { headers: { 'X-API-Key': benchKey(n) } });
  const body = await response.json() as { data?: { product?: { title?: string } } };
  return { status: response.status, title: body.data?.product?.title };
}

export async function runScalePartnerRows(options: ScalePartnerOptions = {}): Promise<ScalePartnerRows> {
  const partners = options.partners ?? DEFAULT_PARTNERS;
  const products = options.productsPerPartner ?? DEFAULT_PRODUCTS_PER_PARTNER;
  const rounds = options.rounds ?? DEFAULT_ROUNDS;
  const serviceDir = resolve(options.serviceDir ?? OWN_DIR);
  const all = Array.from({ length: partners }, (_, n) => n);
  const middle = Math.floor(partners / 2);
  const watched = Array.from({ length: Math.min(WATCHED_PARTNERS, partners - 1) }, (_, i) => (i < middle ? i : i + 1));

  const name = `pcat_bench_scale_partners_${process.pid}`;
  const server = await createConnection({ uri: SERVER_URL, connectTimeout: 2_000 });
  await server.query(`drop database if exists \`${name}\``);
  await server.query(`create database \`${name}\` character set utf8mb4 collate utf8mb4_bin`);
  const target = new URL(SERVER_URL);
  const databaseUrl = `${SERVER_URL.replace(/\/$/, '')}/${name}`;
  const dir = await mkdtemp(join(tmpdir(), 'pcat-scale-partners-'));
  const counter = await startStatementCounter({ host: target.hostname, port: Number(target.port || 3306) });
  const counted = new URL(databaseUrl);
  counted.port = String(counter.port);
  let redis: BenchRedis | null = null;
  let client: Redis | null = null;
  try {
    await migrate(databaseUrl);
    redis = await openBenchRedis('token counts');
    client = redis === null ? null : new Redis(redis.env.REDIS_URL!);
    const redisUrl = redis?.env.REDIS_URL;
    const base = join(dir, 'base.json');
    const fileBytes = await writePartners(base, all, products, new Map());
    // Round r's files: the whole file changes the middle partner's product 1 from what the round before left; its file alone then changes product 2.
    const roundFiles = async (r: number): Promise<{ oneProduct: string; onePartner: string }> => {
      const files = { oneProduct: join(dir, 'one-product.json'), onePartner: join(dir, 'one-partner.json') };
      const second = r === 1 ? new Map<number, string>() : new Map([[2, `Other ${r - 1}`]]);
      await writePartners(files.oneProduct, all, products, new Map([[middle, new Map([[1, `Changed ${r}`], ...second])]]));
      await writePartners(files.onePartner, [middle], products, new Map([[middle, new Map([[1, `Changed ${r}`], [2, `Other ${r}`]])]]));
      return files;
    };

    const measured = async (file: string): Promise<ImportCost> => {
      const before = counter.statements();
      const { ms, peakRssMb } = await cliImport(serviceDir, counted.toString(), file, redisUrl);
      return { statements: counter.statements() - before, ms, peakRssMb };
    };
    const first = await measured(base);
    const unchanged = await measured(base);
    let files = await roundFiles(1);

    const catalogIds = all.flatMap((n) => [partnerId(n), sandboxCatalogOf(partnerId(n))]);
    const tokensBefore = client === null ? null : await tokens(client, catalogIds);
    const measureOneProduct = async (serviceUrl?: string, metricsUrl?: string): Promise<{ cost: ImportCost; cache: ScalePartnerRows['cache'] }> => {
      if (serviceUrl === undefined || metricsUrl === undefined) return { cost: await measured(files.oneProduct), cache: null };
      // Each answer read once from the database, then held: the second lookup is a hit.
      for (const n of [...watched, middle]) for (let i = 0; i < 2; i += 1) await lookup(serviceUrl, n, 'B-1');
      const before = await cacheCounts(metricsUrl);
      const cost = await measured(files.oneProduct);
      for (const n of watched) {
        const answer = await lookup(serviceUrl, n, 'B-1');
        if (answer.status !== 200) throw new Error(`lookup of ${partnerId(n)}: ${answer.status}`);
      }
      const after = await cacheCounts(metricsUrl);
      const changedAnswer = await lookup(serviceUrl, middle, 'B-1');
      const changedMissed = (await cacheCounts(metricsUrl)).misses > after.misses && changedAnswer.title === 'Changed 1';
      return { cost, cache: { lookups: watched.length, hits: after.hits - before.hits, misses: after.misses - before.misses, changedPartnerMissed: changedMissed } };
    };
    let oneProduct: { cost: ImportCost; cache: ScalePartnerRows['cache'] };
    if ((options.service ?? true) && redis !== null) {
      const metricsPort = await freePort();
      oneProduct = await withServer(join(OWN_DIR, 'src/main.ts'), {
        ...redis.env, STORAGE: 'mysql', DATABASE_URL: databaseUrl, CACHE_TTL_MS: AN_HOUR_MS, METRICS_PORT: String(metricsPort),
        RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: 'warn',
      }, (serviceUrl) => measureOneProduct(serviceUrl, `http://127.0.0.1:${metricsPort}/metrics`));
    } else {
      oneProduct = await measureOneProduct();
    }
    const tokensAfter = client === null ? null : await tokens(client, catalogIds);
    const wholeFile = [oneProduct.cost];
    const onePartner = [await measured(files.onePartner)];
    for (let r = 2; r <= rounds; r += 1) {
      files = await roundFiles(r);
      wholeFile.push(await measured(files.oneProduct));
      onePartner.push(await measured(files.onePartner));
    }
    return {
      partners,
      productsPerPartner: products,
      fileMb: fileBytes / 1e6,
      rounds,
      first,
      unchanged,
      oneProductChanged: medianCost(wholeFile),
      onePartner: medianCost(onePartner),
      ratio: {
        statements: median(wholeFile.map((c, i) => c.statements / onePartner[i]!.statements)),
        time: median(wholeFile.map((c, i) => c.ms / onePartner[i]!.ms)),
      },
      tokens: tokensBefore === null || tokensAfter === null ? null : {
        catalogs: tokensAfter.catalogs.filter((token, i) => token !== tokensBefore.catalogs[i]).length,
        of: catalogIds.length,
        keySet: tokensAfter.keys !== tokensBefore.keys,
      },
      cache: oneProduct.cache,
    };
  } finally {
    client?.disconnect();
    await redis?.cleanup();
    await counter.close();
    await rm(dir, { recursive: true, force: true });
    await server.query(`drop database if exists \`${name}\``);
    await server.end();
  }
}

function printRows(rows: ScalePartnerRows): void {
  const count = (n: number): string => n.toLocaleString('en-US');
  const cost = (c: ImportCost): string => `${count(c.statements).padStart(9)} statements, ${(c.ms / 1000).toFixed(2).padStart(7)} s, peak RSS ${Math.round(c.peakRssMb)} MB`;
  const lines = [
    `scale-partners: ${count(rows.partners)} partners × ${rows.productsPerPartner} products, a key each, demo sandboxes (file ${rows.fileMb.toFixed(1)} MB)`,
    `  first import                          ${cost(rows.first)}`,
    `  whole file again, unchanged           ${cost(rows.unchanged)}`,
    `  in ${rows.rounds} alternating rounds, medians:`,
    `  whole file, one product changed       ${cost(rows.oneProductChanged)}`,
    `  one-partner file, one product changed ${cost(rows.onePartner)}`,
    `  whole file (one product) / one-partner file, median of the rounds: ${rows.ratio.statements.toFixed(2)}× the statements, ${rows.ratio.time.toFixed(2)}× the time`,
  ];
  if (rows.tokens !== null) {
    lines.push(`  tokens the first whole-file import replaced: ${count(rows.tokens.catalogs)} of ${count(rows.tokens.of)} catalogs; key set ${rows.tokens.keySet ? 'replaced' : 'kept'}`);
  }
  if (rows.cache !== null) {
    lines.push(`  after it, ${rows.cache.lookups} lookups of unchanged partners: ${rows.cache.hits} cache hits, ${rows.cache.misses} misses; the changed partner's: ${rows.cache.changedPartnerMissed ? 'a miss, with the new answer' : 'NOT a miss with the new answer'}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      partners: { type: 'string', default: String(DEFAULT_PARTNERS) },
      products: { type: 'string', default: String(DEFAULT_PRODUCTS_PER_PARTNER) },
      rounds: { type: 'string', default: String(DEFAULT_ROUNDS) },
      'no-service': { type: 'boolean', default: false },
      'service-dir': { type: 'string' },
    },
  });
  printRows(await runScalePartnerRows({
    partners: Number(values.partners),
    productsPerPartner: Number(values.products),
    rounds: Number(values.rounds),
    service: !values['no-service'],
    ...(values['service-dir'] === undefined ? {} : { serviceDir: values['service-dir'] }),
  }));
}
