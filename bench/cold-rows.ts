/**
 * The cold rows of `npm run bench` (`--only cold`): the production configuration (MySQL storage,
 * Redis limits, every setting at its default but the bench's two, as the production row) answering
 * random SKUs of a 1,000,000-product catalog, uniform and Zipf-distributed (s = 1), beside its limit
 * (bench/db-limit-server.ts: node:http and one prepared SELECT per request, through a pool of the
 * service's size) under the same SKUs, in alternating rounds, each run on a fresh server after a
 * 2 s warm-up. For the service, its own /metrics say during the measured run how many lookups the
 * response cache answered, and how many callers waited for a database connection: the mean from
 * pcat_db_pool_wait_seconds_total, the peak from pcat_db_pool_waiting sampled every 250 ms.
 */
import { basename, join, resolve } from 'node:path';
import { openBenchRedis } from './bench-redis.js';
import { bufferPoolAndAnswersMb, openColdCatalog, type ColdCatalog } from './cold-catalog.js';
import { LOAD_CONNECTIONS, NO_STATUSES_LUA, runWrk, type Load } from './load.js';
import { median } from './percentile.js';
import { cores, cpuMicros, freePort, pinned, withServer, type ServerOptions } from './server-process.js';
import type { BenchContext } from './target.js';
import { SERVING_POOL } from '../src/adapters/mysql/mysql-database.js';
import { reasonOf } from '../src/domain/failure-reason.js';

type Distribution = 'uniform' | 'zipf';

interface ColdRow {
  readonly name: string;
  readonly script: string;
  readonly env: Record<string, string>;
  readonly distribution: Distribution;
  /** A row of the service (its /metrics are read), or a limit's. */
  readonly service: boolean;
  /** The limit row of the same distribution, that this row's ratios are taken against. */
  readonly limit?: ColdRow;
}

/** What the service's /metrics said over one measured run. */
interface ServiceFigures {
  readonly hits: number;
  readonly misses: number;
  /** Mean callers waiting for a connection: the wait seconds' growth over the run's length. */
  readonly meanWaiting: number;
  /** The most callers seen waiting in a sample. */
  readonly maxWaiting: number;
  /** Mean seconds a miss waited for a connection. */
  readonly waitPerMiss: number;
  readonly entries: number;
}

interface ColdSample extends Load {
  readonly service?: ServiceFigures;
  /** The server's CPU time per answer, in microseconds: whether it was busy or waiting. */
  readonly cpuUs: number;
}

export interface ColdOptions {
  readonly rounds: number;
  readonly durationS: number;
  readonly products: number;
  readonly keys: number;
  /** Profile the service's uniform row in its last round (`node --cpu-prof`) into this directory. */
  readonly cpuProfDir?: string | undefined;
  /** DATABASE_POOL_SIZE for the service and its limits alike (`--pool-size`); the service's default without it. */
  readonly poolSize?: number | undefined;
  /** Also run the cold uniform service row from these checkouts (`--baseline-dir`), in the same rounds. */
  readonly baselineDirs?: readonly string[];
}

export const SKU_PATH = '/api/v1/public/sku/';
/** Zipf rank r is SKU index ((r - 1) * STRIDE) mod products: the popular SKUs spread over the catalog, not its first rows. */
const STRIDE = 611_953;
const SAMPLE_EVERY_MS = 250;
const LIMIT_SCRIPT = 'bench/db-limit-server.ts';

/**
 * A wrk script asking for a random SKU of the catalog each request, with the catalog's keys in turn.
 * Zipf (s = 1): P(rank r) = (1/r) / H(N); the cumulative table is built once per Lua state, and each
 * request searches it with a uniform draw.
 */
export function skuScript(catalog: ColdCatalog, distribution: Distribution, seed: number): string {
  const pick = distribution === 'uniform'
    ? 'local function pick() return math.random(0, N - 1) end'
    : `local cdf = {}
local total = 0
for r = 1, N do total = total + 1 / r; cdf[r] = total end
for r = 1, N do cdf[r] = cdf[r] / total end
local function pick()
  local u = math.random()
  local lo, hi = 1, N
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if cdf[mid] < u then lo = mid + 1 else hi = mid end
  end
  return ((lo - 1) * ${STRIDE}) % N
end`;
  return `${NO_STATUSES_LUA}
math.randomseed(${seed})
local N = ${catalog.products}
local prefix = "${SKU_PATH}${catalog.skuPrefix}"
local keys = {${catalog.keys.map((k) => `"Bearer ${k}"`).join(',')}}
${pick}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", prefix .. string.format("%d", pick()), { ["Authorization"] = keys[(i % #keys) + 1] })
end
`;
}

async function drive(base: string, context: BenchContext, catalog: ColdCatalog, distribution: Distribution, seconds: number): Promise<Load> {
  // A fresh seed each run: the measured run must not replay the SKUs its warm-up put in the cache.
  const seed = Math.floor(Math.random() * 2 ** 31);
  return runWrk(base, join(context.dir, `cold-${distribution}.lua`), skuScript(catalog, distribution, seed), seconds, pinned);
}

/** The service's figures named, summed over their labels, from a scrape. */
async function scrape(metricsUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(pcat_[a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (match === null) continue;
    const name = match[2]?.includes('result="hit"') === true ? `${match[1]!}:hit` : match[2]?.includes('result="miss"') === true ? `${match[1]!}:miss` : match[1]!;
    values.set(name, (values.get(name) ?? 0) + Number(match[3]));
  }
  return values;
}

async function measure(row: ColdRow, context: BenchContext, catalog: ColdCatalog, options: ColdOptions, serverOptions: ServerOptions): Promise<ColdSample> {
  const isService = row.service;
  const metricsPort = isService ? await freePort() : 0;
  const env = isService ? { ...row.env, METRICS_PORT: String(metricsPort) } : row.env;
  return withServer(row.script, env, async (base, pid) => {
    await drive(base, context, catalog, row.distribution, 2); // warm-up: JIT, connections, the cache's first answers
    const cpuBefore = cpuMicros(pid);
    const perAnswer = (load: Load): number => (cpuMicros(pid) - cpuBefore) / Math.max(1, load.requests);
    if (!isService) {
      const load = await drive(base, context, catalog, row.distribution, options.durationS);
      return { ...load, cpuUs: perAnswer(load) };
    }
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const before = await scrape(metricsUrl);
    const startedAt = performance.now();
    let maxWaiting = 0;
    const done = new AbortController();
    const sampler = (async () => {
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
        if (done.signal.aborted) return;
        maxWaiting = Math.max(maxWaiting, (await scrape(metricsUrl)).get('pcat_db_pool_waiting') ?? 0);
      }
    })();
    const load = await drive(base, context, catalog, row.distribution, options.durationS);
    const cpuUs = perAnswer(load);
    done.abort();
    await sampler;
    const after = await scrape(metricsUrl);
    const seconds = (performance.now() - startedAt) / 1000;
    const delta = (name: string): number => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    const misses = delta('pcat_response_cache_lookups_total:miss');
    const waited = delta('pcat_db_pool_wait_seconds_total');
    return {
      ...load,
      cpuUs,
      service: {
        hits: delta('pcat_response_cache_lookups_total:hit'), misses, meanWaiting: waited / seconds, maxWaiting,
        waitPerMiss: misses === 0 ? 0 : waited / misses, entries: after.get('pcat_response_cache_entries') ?? 0,
      },
    };
  }, serverOptions);
}

/** The cold rows, their table and each service row against its limit; nothing without MariaDB and Redis. */
export async function runColdRows(context: BenchContext, options: ColdOptions): Promise<void> {
  let catalog: ColdCatalog;
  try {
    catalog = await openColdCatalog(options.products, options.keys);
  } catch (error) {
    process.stdout.write(`bench: no cold rows: ${reasonOf(error)}\n`);
    return;
  }
  const redis = await openBenchRedis('cold rows');
  if (redis === null) return;
  try {
    const pool: Record<string, string> = options.poolSize === undefined ? {} : { DATABASE_POOL_SIZE: String(options.poolSize) };
    const serviceEnv = { ...context.serviceEnv, STORAGE: 'mysql', DATABASE_URL: catalog.url, ...redis.env, ...pool };
    const limitEnv = { DATABASE_URL: catalog.url, PARTNER: catalog.partner, ...pool };
    const limitUniform: ColdRow = { name: 'limit: node:http + one prepared SELECT, uniform SKUs', script: LIMIT_SCRIPT, env: limitEnv, distribution: 'uniform', service: false };
    const limitZipf: ColdRow = { name: 'limit: node:http + one prepared SELECT, Zipf SKUs', script: LIMIT_SCRIPT, env: limitEnv, distribution: 'zipf', service: false };
    // The contract's floor: what every request must also do (a shared count that reads the version tokens).
    const countedUniform: ColdRow = {
      name: 'limit + the Redis count every request makes, uniform SKUs', script: LIMIT_SCRIPT, env: { ...limitEnv, REDIS_URL: redis.env.REDIS_URL! }, distribution: 'uniform', service: false, limit: limitUniform,
    };
    const rows: ColdRow[] = [
      limitUniform,
      { name: 'service, MySQL + Redis, production settings, cold uniform SKUs', script: context.serviceScript, env: serviceEnv, distribution: 'uniform', service: true, limit: limitUniform },
      countedUniform,
      limitZipf,
      { name: 'service, MySQL + Redis, production settings, Zipf (s = 1) SKUs', script: context.serviceScript, env: serviceEnv, distribution: 'zipf', service: true, limit: limitZipf },
      ...(options.baselineDirs ?? []).map((dir): ColdRow => ({
        name: `service, production settings, cold uniform SKUs, baseline ${basename(resolve(dir))}`, script: resolve(dir, 'src/main.ts'), env: serviceEnv, distribution: 'uniform', service: true, limit: limitUniform,
      })),
    ];
    const sizes = await bufferPoolAndAnswersMb(catalog);
    process.stdout.write(`\nbench: cold rows, ${rows.length} rows x ${options.rounds} rounds x ${options.durationS}s, ${catalog.products.toLocaleString('en-US')} products of one partner, ` +
      `${catalog.keys.length} keys, wrk (${LOAD_CONNECTIONS} connections), database pools of ${options.poolSize ?? SERVING_POOL.connectionLimit} connections, ${pinned ? 'server on core 0, load and Redis on core 1' : 'not pinned'}, ${cores} cores; ` +
      `InnoDB buffer pool ${sizes.pool.toLocaleString('en-US')} MB, stored answers ${sizes.answers.toLocaleString('en-US')} MB\n`);
    const samples = new Map<ColdRow, ColdSample[]>(rows.map((row) => [row, []]));
    for (let round = 0; round < options.rounds; round += 1) {
      const order = round % 2 === 0 ? rows : [...rows].reverse();
      for (const row of order) {
        const profile = options.cpuProfDir !== undefined && round === options.rounds - 1 && row.service && row.distribution === 'uniform';
        const serverOptions: ServerOptions = profile ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`], stopGracefully: true } : {};
        const sample = await measure(row, context, catalog, options, serverOptions);
        samples.get(row)!.push(sample);
        const s = sample.service;
        process.stdout.write(`  round ${round + 1}: ${row.name}: ${Math.round(sample.rps)} req/s, p99 ${sample.p99Ms.toFixed(1)} ms` +
          (s === undefined ? '' : `, hit rate ${hitRate(s)}, waiting mean ${s.meanWaiting.toFixed(1)} max ${s.maxWaiting}`) +
          `${sample.errors > 0 ? `, ${sample.errors} errors` : ''}${profile ? `, CPU profile in ${options.cpuProfDir}` : ''}\n`);
      }
    }
    printColdTable(rows, samples);
  } finally {
    await redis.cleanup();
  }
}

const hitRate = (s: ServiceFigures): string => `${((100 * s.hits) / Math.max(1, s.hits + s.misses)).toFixed(1)} %`;

/** Medians over the rounds; ratios taken round by round against the limit of the same distribution, then the median. */
function printColdTable(rows: ColdRow[], samples: Map<ColdRow, ColdSample[]>): void {
  const header = ['server', 'req/s (median)', 'p50 ms', 'p99 ms', 'req/s / limit', 'p99 / limit', 'cache hit rate', 'pool waiting, mean (max sampled)', 'queue wait per miss ms', 'CPU µs/answer', 'errors'];
  process.stdout.write(`\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|\n`);
  for (const row of rows) {
    const s = samples.get(row)!;
    const cells = [row.name, String(Math.round(median(s.map((x) => x.rps)))), median(s.map((x) => x.p50Ms)).toFixed(2), median(s.map((x) => x.p99Ms)).toFixed(2)];
    const limit = row.limit === undefined ? undefined : samples.get(row.limit)!;
    cells.push(...(limit === undefined ? ['1.00', '1.00'] : [ratio(s, limit, 'rps'), ratio(s, limit, 'p99Ms')]));
    if (!row.service) cells.push('-', '-', '-');
    else {
      const figures = s.map((x) => x.service!);
      cells.push(
        figures.map(hitRate).join(', '),
        figures.map((f) => `${f.meanWaiting.toFixed(1)} (${f.maxWaiting})`).join(', '),
        figures.map((f) => (f.waitPerMiss * 1000).toFixed(2)).join(', '),
      );
    }
    cells.push(median(s.map((x) => x.cpuUs)).toFixed(1), String(s.reduce((n, x) => n + x.errors, 0)));
    process.stdout.write(`| ${cells.join(' | ')} |\n`);
  }
  process.stdout.write('(hit rate, pool waiting and queue wait: each round in turn; the targets of issue 27: cold uniform at 0.85 of the limit\'s req/s or more, p99 at most 1.5 times the limit\'s)\n');
  const counted = rows.find((row) => !row.service && row.limit !== undefined);
  const service = rows.find((row) => row.service && row.distribution === 'uniform');
  if (counted !== undefined && service !== undefined) {
    const floor = samples.get(counted)!;
    const ours = samples.get(service)!;
    process.stdout.write(`service, cold uniform, against the limit with the Redis count: req/s ${ratio(ours, floor, 'rps')}, p99 ${ratio(ours, floor, 'p99Ms')} ` +
      '(same rounds; the targets of issue 36: req/s 0.95 or more, p99 at most 1.5 times)\n');
  }
}

/** The median over the rounds of a figure's ratio, each round's against the other row's in that round. */
export function ratio(rows: readonly Load[], against: readonly Load[], figure: 'rps' | 'p99Ms'): string {
  return median(rows.map((x, round) => x[figure] / against[round]![figure])).toFixed(2);
}
