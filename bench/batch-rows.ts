/**
 * The batch row of `npm run bench` (`--only batch`): the production settings (MySQL + Redis) reading
 * the same products cold, that is none of them held by the response cache (a fresh server each run),
 * as batches of 100 SKUs against one lookup each. Each run first reads other products the same way
 * (JIT, connections, prepared statements), then the measured ones, BATCH_CONCURRENCY requests in
 * flight from a client on the load core; the two ways alternate which goes first round by round.
 * Printed per product: the run's wall time, the server's CPU time, and MariaDB statements, from its
 * global Questions counter read just before and after the measured run (every client of the server
 * counts). The bench catalog is small enough for InnoDB to hold it: cold here is the service's cold.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { MAX_BATCH_VALUES } from '../src/domain/lookup-batch.js';
import { openBenchRedis } from './bench-redis.js';
import { outputOf } from './child-output.js';
import { median } from './percentile.js';
import { cpuMicros, onLoadCore, pinned, withServer } from './server-process.js';
import type { BenchContext } from './target.js';
import { openMysqlBenchDatabase, SERVER_URL } from './targets-mysql.js';

export const BATCH_ROW = 'batch of 100 cold SKUs against 100 single lookups';
/** Requests in flight, for both ways: a renderer or a sync job asking several at once, within the pool's 10 connections. */
const BATCH_CONCURRENCY = 8;
/** Products read before the measured ones, and products measured, per run. */
const WARM_PRODUCTS = 1_000;
const MEASURED_PRODUCTS = 5_000;
/** The later of two readings of the counter counts itself. */
const READING_STATEMENTS = 1;

type Way = 'batch' | 'single';

interface BatchSample {
  readonly requests: number;
  readonly products: number;
  readonly ms: number;
  readonly cpuUs: number;
  readonly statements: number;
}

/** The requests reading `skus` one way, keys in turn. */
function requestsFor(way: Way, skus: readonly string[], keys: readonly string[]): { path: string; key: string }[] {
  const paths = way === 'single'
    ? skus.map((sku) => `/api/v1/public/sku/${sku}`)
    : Array.from({ length: Math.ceil(skus.length / MAX_BATCH_VALUES) }, (_, i) => `/api/v1/public/products?sku=${skus.slice(i * MAX_BATCH_VALUES, (i + 1) * MAX_BATCH_VALUES).join(',')}`);
  return paths.map((path, i) => ({ path, key: keys[i % keys.length]! }));
}

async function drive(context: BenchContext, base: string, requests: { path: string; key: string }[]): Promise<number> {
  const file = join(context.dir, 'batch-plan.json');
  writeFileSync(file, JSON.stringify({ base, concurrency: BATCH_CONCURRENCY, requests }));
  const out = JSON.parse(await outputOf(onLoadCore([process.execPath, '--import', 'tsx', 'bench/batch-client.ts', file]))) as { ms: number; statuses: Record<string, number> };
  if (out.statuses['200'] !== requests.length) throw new Error(`batch row: answers ${JSON.stringify(out.statuses)} for ${requests.length} requests`);
  return out.ms;
}

export async function runBatchRows(context: BenchContext, options: { rounds: number }): Promise<void> {
  const { skus, keys } = context.catalog;
  const measured = skus.slice(WARM_PRODUCTS, WARM_PRODUCTS + MEASURED_PRODUCTS);
  if (measured.length < MAX_BATCH_VALUES) {
    process.stdout.write(`bench: no batch row: the catalog needs more than ${WARM_PRODUCTS + MAX_BATCH_VALUES} products (--products)\n`);
    return;
  }
  const database = await openMysqlBenchDatabase(context, 'batch row');
  if (database === null) return;
  const redis = await openBenchRedis('batch row');
  const counter = await createConnection({ uri: SERVER_URL, connectTimeout: 2_000 });
  const questions = async (): Promise<number> => Number((await counter.query<RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Questions'"))[0][0]!.Value);
  try {
    if (redis === null) return;
    const env = { ...database.env, ...redis.env };
    process.stdout.write(`\nbench: ${BATCH_ROW}, MySQL + Redis, production settings: ${options.rounds} rounds, each way on a fresh server, ` +
      `${measured.length} products measured after ${WARM_PRODUCTS} read first, ${BATCH_CONCURRENCY} requests in flight, ${pinned ? 'server on core 0, client on core 1' : 'not pinned'}\n`);
    const samples: Record<Way, BatchSample[]> = { batch: [], single: [] };
    for (let round = 0; round < options.rounds; round += 1) {
      for (const way of (round % 2 === 0 ? ['batch', 'single'] : ['single', 'batch']) as Way[]) {
        const sample = await withServer(context.serviceScript, env, async (base, pid) => {
          await drive(context, base, requestsFor(way, skus.slice(0, WARM_PRODUCTS), keys));
          const requests = requestsFor(way, measured, keys);
          const [cpuBefore, before] = [cpuMicros(pid), await questions()];
          const ms = await drive(context, base, requests);
          const statements = (await questions()) - before - READING_STATEMENTS;
          return { requests: requests.length, products: measured.length, ms, cpuUs: cpuMicros(pid) - cpuBefore, statements };
        });
        samples[way].push(sample);
        process.stdout.write(`  round ${round + 1}: ${way}: ${sample.requests} requests in ${sample.ms.toFixed(0)} ms, ${sample.statements} statements\n`);
      }
    }
    printBatchTable(samples);
  } finally {
    await counter.end();
    await redis?.cleanup();
    await database.drop();
  }
}

function printBatchTable(samples: Record<Way, BatchSample[]>): void {
  const perProduct = (s: BatchSample, figure: number): number => figure / s.products;
  const header = ['way', 'requests', 'µs per product (median)', 'server CPU µs per product', 'statements per request', 'statements per product'];
  process.stdout.write(`\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|\n`);
  for (const way of ['batch', 'single'] as const) {
    const s = samples[way];
    process.stdout.write(`| ${way === 'batch' ? `batches of ${MAX_BATCH_VALUES}` : 'single lookups'} | ${s[0]!.requests} | ` +
      `${median(s.map((x) => perProduct(x, x.ms * 1000))).toFixed(1)} | ${median(s.map((x) => perProduct(x, x.cpuUs))).toFixed(1)} | ` +
      `${median(s.map((x) => x.statements / x.requests)).toFixed(2)} | ${median(s.map((x) => perProduct(x, x.statements))).toFixed(3)} |\n`);
  }
  const ratio = median(samples.single.map((single, round) => single.ms / samples.batch[round]!.ms));
  process.stdout.write(`time per product, single lookups over batches (median of rounds): ${ratio.toFixed(1)}\n`);
}
