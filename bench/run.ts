/**
 * `npm run bench`: req/s, p50/p99 latency and peak RSS of the service against a bare node:http
 * server writing the very same bytes, in the same run, pinned to separate cores where possible.
 * Figures are ratios to the bare server because machines here are shared and noisy. The service
 * runs with its metrics on, as in production; the memory row runs again with them off
 * (METRICS_PORT=0), and the ratio of the two, same rounds, is what counting costs. With the
 * production row (MySQL + Redis, needs both), the database queries per request after the table
 * (queries-per-request.ts). The production row runs again with Redis as Sentinel (a primary, a
 * replica, three sentinels) and as a Cluster of three primaries (bench-topologies.ts), each set
 * against the one-Redis row. Then the attacks (attacks.ts): a made-up-key flood and a non-reading
 * pipeline attack.
 *
 * Options: --duration <s> (per run, default 8), --rounds <n> (default 3), --products <n> (default 10000),
 * --keys <n> (default 1000), --load wrk|autocannon (default: wrk when installed),
 * --only <text,...> (only rows whose name contains one of these, besides the bare reference; the
 * attacks with `attacks`, `flood` or `pipeline`; `--only "MySQL + Redis"` runs just the bare
 * reference and the production rows (one Redis, Sentinel, Cluster), then the database queries
 * per request, quickly),
 * --flood-connections <n> (the made-up-key flood's, default 256), --attack-seconds <s> (the
 * pipeline attack, default 20),
 * --service-dir <dir> (run the service from another checkout, e.g. a worktree of an older commit),
 * --baseline-dir <dir>[,<dir>...] (also run the memory row, and the response-cache and production rows when they run, from other checkouts, in the same alternating
 * rounds, and print each one's ratio to this checkout's: before and after a change in one run).
 * The cold rows (cold-rows.ts; `--only cold` runs them, then the replica rows): the production settings on random SKUs
 * of a --cold-products catalog (default 1000000, seeded once into a database of its own and kept),
 * uniform and Zipf, beside their limit, with the cache hit rate and the pool's waiting callers;
 * --cpu-prof <dir> writes a CPU profile of the service's cold uniform run in the last round there;
 * --pool-size <n> runs the service and its limits with pools of n connections (DATABASE_POOL_SIZE).
 * The replica rows (replica-rows.ts; `--only replica` runs just them, `--only primary` or `--only lagging`
 * one, `--only cold` them after the cold rows): the production settings on random SKUs of a --replica-products catalog
 * (default 100000) on a MariaDB primary and GTID replica of the bench's own, seeded each run, read
 * from the primary, from the replica, and with the replica lagging, beside the bare server, with
 * each server's statements per request and the reads sent to the primary by reason.
 * The batch row (batch-rows.ts; `--only batch` runs just it): on the production settings, the same cold
 * products read as batches of 100 SKUs and as single lookups, printed per product.
 * The webhook rows (webhook-rows.ts; `--only webhooks` runs just them, `--only "first attempt"`,
 * `--only "lookups while"` or `--only "another partner"` one): on the production settings, how long
 * after an import's commit its message's first attempt reaches a receiver (--webhook-imports imports,
 * default 100, each verified with the standardwebhooks library), the lookups' throughput while 10
 * endpoints hang against none, and how long another partner's message takes while one partner's 10
 * endpoints hang.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chooseAttacks, runAttacks } from './attacks.js';
import { writeBenchCatalog } from './bench-catalog.js';
import { runBatchRows } from './batch-rows.js';
import { startOtlpSink, tracedEnv } from './otlp-sink.js';
import { runColdRows } from './cold-rows.js';
import { drive, LOAD_CONNECTIONS, loadGenerator, type Load } from './load.js';
import { median } from './percentile.js';
import { printQueriesPerRequest } from './queries-per-request.js';
import { anyReplicaRow, chooseReplicaRows, DEFAULT_REPLICA_PRODUCTS, runReplicaRows } from './replica-rows.js';
import { cores, cpuMicros, peakRssMb, pinned, withServer } from './server-process.js';
import { type BenchContext, type Target } from './target.js';
import { CACHE_ON_ROW, cacheOnBaselineRow, mysqlTargets, PRODUCTION_ROW, productionBaselineRow, topologyRow } from './targets-mysql.js';
import { anyWebhookRow, chooseWebhookRows, runWebhookRows } from './webhook-rows.js';
import { reasonOf } from '../src/domain/failure-reason.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    products: { type: 'string', default: '10000' },
    keys: { type: 'string', default: '1000' },
    load: { type: 'string' },
    only: { type: 'string' },
    'attack-seconds': { type: 'string', default: '20' },
    'flood-connections': { type: 'string', default: '256' },
    'service-dir': { type: 'string', default: '.' },
    'baseline-dir': { type: 'string' },
    'cold-products': { type: 'string', default: '1000000' },
    'replica-products': { type: 'string', default: String(DEFAULT_REPLICA_PRODUCTS) },
    'pool-size': { type: 'string' },
    'cpu-prof': { type: 'string' },
    'webhook-imports': { type: 'string', default: '100' },
  },
});
const durationS = Number(values.duration);
const rounds = Number(values.rounds);
const MEMORY_ROW = 'service, memory storage';
/** node:http writing the service's headers too: what the API's answer costs with no code of the service's. */
const HEADERS_ROW = 'bare node:http, pre-built bytes with the service\'s headers';
/** The memory row without metrics: against it, what counting requests costs on the lookup path. */
const METRICS_OFF_ROW = 'service, memory storage, metrics off';
/** The memory row with traces on, kept at `ratio`, exported to a sink of the bench's own (docs/observability.md). */
const TRACES_ROW = (ratio: number): string => `service, memory storage, traces at ${ratio * 100} %`;
/** The memory row run from a --baseline-dir checkout. */
const baselineRow = (dir: string): string => `service, memory storage, baseline ${basename(resolve(dir))}`;
const BASELINE_DIRS = values['baseline-dir']?.split(',').filter((dir) => dir !== '') ?? [];

interface Sample extends Load {
  readonly rssMb: number;
  /** The server's CPU time per answer, in microseconds. */
  readonly cpuUs: number;
}

function measure(target: Target, context: BenchContext): Promise<Sample> {
  return withServer(target.script, { ...target.env, BODY_FILE: context.bodyFile }, async (base, pid) => {
    await drive(context.generator, base, context, 2, pinned); // warm-up: JIT, caches
    const cpuBefore = cpuMicros(pid);
    const load = await drive(context.generator, base, context, durationS, pinned);
    return { ...load, rssMb: peakRssMb(pid), cpuUs: (cpuMicros(pid) - cpuBefore) / Math.max(1, load.requests) };
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pcat-bench-'));
  const catalog = writeBenchCatalog(join(dir, 'catalog.json'), Number(values.products), Number(values.keys));
  const generator = values.load === 'autocannon' || values.load === 'wrk' ? values.load : loadGenerator();
  // The load generator stands for many partners on one address: its 50 connections must all be let in.
  const serviceEnv = {
    CATALOG_FILE: catalog.file, RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'info', HOST: '127.0.0.1',
    MAX_CONNECTIONS_PER_ADDRESS: String(2 * LOAD_CONNECTIONS),
  };
  const serviceScript = resolve(values['service-dir'], 'src/main.ts');
  const otlpSink = await startOtlpSink();
  const context: BenchContext = {
    dir, catalog, generator, bodyFile: join(dir, 'body.json'), headersFile: join(dir, 'headers.json'), serviceEnv, serviceScript, otlpSink,
  };

  // The bare servers write the bytes the service itself answers for the first SKU, one of them with its headers too.
  await captureBody(context);

  const only = values.only?.split(',').filter((text) => text !== '');
  await runTable(context, only);
  if (otlpSink.received.exports > 0) {
    process.stdout.write(`bench: the traced rows exported ${otlpSink.received.exports} times, ${(otlpSink.received.bytes / 1e6).toFixed(1)} MB of spans in all\n`);
  }
  await otlpSink.close();
  if (only === undefined || only.includes('cold')) {
    const cpuProfDir = values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']);
    await runColdRows(context, { rounds, durationS, products: Number(values['cold-products']), keys: Number(values.keys), cpuProfDir,
      poolSize: values['pool-size'] === undefined ? undefined : Number(values['pool-size']), baselineDirs: BASELINE_DIRS });
  }
  const replicaRows = chooseReplicaRows(only);
  if (anyReplicaRow(replicaRows)) {
    await runReplicaRows(context, replicaRows, { rounds, durationS, products: Number(values['replica-products']), keys: Number(values.keys) });
  }
  if (only === undefined || only.includes('batch')) await runBatchRows(context, { rounds });
  const webhookRows = chooseWebhookRows(only);
  if (anyWebhookRow(webhookRows)) await runWebhookRows(context, webhookRows, { rounds, durationS, imports: Number(values['webhook-imports']) });
  if (only === undefined) {
    spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/bounded-memory.ts'], { stdio: 'inherit' });
    spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/response-cache-bytes.ts'], { stdio: 'inherit' });
  }
  const attacks = chooseAttacks(only);
  if (attacks.flood || attacks.pipeline) {
    const flood = { seconds: durationS, rounds, connections: Number(values['flood-connections']) };
    await runAttacks(context, attacks, { flood, attackSeconds: Number(values['attack-seconds']) });
  }
}

/** The table, and with the production row the database queries per request; skipped when --only names no row of it. */
async function runTable(context: BenchContext, only: string[] | undefined): Promise<void> {
  const rows: Target[] = [
    { name: 'bare node:http, pre-built bytes', script: 'bench/bare-server.ts', env: {}, reference: true },
    { name: 'bare node:http, JSON.stringify per request', script: 'bench/bare-server.ts', env: { MODE: 'stringify' } },
    { name: HEADERS_ROW, script: 'bench/bare-server.ts', env: { MODE: 'headers', HEADERS_FILE: context.headersFile } },
    { name: 'koa + router + security headers, cached bytes', script: 'bench/koa-ceiling.ts', env: {} },
    { name: MEMORY_ROW, script: context.serviceScript, env: context.serviceEnv },
    { name: METRICS_OFF_ROW, script: context.serviceScript, env: { ...context.serviceEnv, METRICS_PORT: '0' } },
    { name: TRACES_ROW(0.01), script: context.serviceScript, env: { ...context.serviceEnv, ...tracedEnv(context.otlpSink, 0.01) } },
    { name: TRACES_ROW(1), script: context.serviceScript, env: { ...context.serviceEnv, ...tracedEnv(context.otlpSink, 1) } },
    ...BASELINE_DIRS.map((dir) => ({ name: baselineRow(dir), script: resolve(dir, 'src/main.ts'), env: context.serviceEnv })),
    ...(only === undefined || only.some((text) => /mysql/i.test(text)) ? await mysqlTargets(context, BASELINE_DIRS) : []),
  ];
  try {
    const targets = rows.filter((t) => only === undefined || t.reference === true || only.some((text) => t.name.includes(text)));
    if (targets.every((t) => t.reference === true)) return;
    printTable(targets, await sampleRows(context, targets));
    const production = targets.find((t) => t.name === PRODUCTION_ROW);
    if (production !== undefined) await printQueriesPerRequest(context, production, rows.find((t) => t.name === CACHE_ON_ROW), durationS);
  } finally {
    for (const target of rows) await target.cleanup?.();
  }
}

/** Every row `rounds` times, each run on a fresh server. */
async function sampleRows(context: BenchContext, targets: Target[]): Promise<Map<Target, Sample[]>> {
  const { catalog, generator } = context;
  process.stdout.write(`bench: ${targets.length} rows x ${rounds} rounds x ${durationS}s, ${catalog.skus.length} products, ${catalog.keys.length} keys, ` +
    `load ${generator} (${LOAD_CONNECTIONS} connections), ${pinned ? 'server on core 0, load on core 1' : 'not pinned'}, ${cores} cores, node ${process.version}\n`);
  const samples = new Map<Target, Sample[]>(targets.map((t) => [t, []]));
  for (let round = 0; round < rounds; round += 1) {
    // Alternate the order so drift on a shared machine does not favour one row.
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      const sample = await measure(target, context);
      samples.get(target)!.push(sample);
      process.stdout.write(`  round ${round + 1}: ${target.name}: ${Math.round(sample.rps)} req/s${sample.errors > 0 ? `, ${sample.errors} errors` : ''}\n`);
    }
  }
  return samples;
}

async function captureBody(context: BenchContext): Promise<void> {
  await withServer(context.serviceScript, context.serviceEnv, async (base) => {
    const { status, rawHeaders, body } = await getRaw(`${base}/api/v1/public/sku/${context.catalog.skus[0]!}`, { Authorization: `Bearer ${context.catalog.keys[0]!}` });
    if (status !== 200) throw new Error(`probe answered ${status}`);
    writeFileSync(context.bodyFile, body);
    // node:http writes Date, Connection and Keep-Alive itself; the request ID is made afresh for each answer.
    const own = rawHeaders.flatMap((value, i) => (i % 2 === 0 && !NODE_WRITES.has(value.toLowerCase()) ? [value, rawHeaders[i + 1]!] : []));
    if (own[0]?.toLowerCase() !== 'x-request-id') throw new Error(`probe's first header is ${own[0] ?? 'missing'}, not X-Request-Id`);
    writeFileSync(context.headersFile, JSON.stringify(own));
  });
}

const NODE_WRITES = new Set(['date', 'connection', 'keep-alive']);

/** A GET with its headers as sent, in order and with their case (fetch gives them sorted and lowercased). */
function getRaw(url: string, headers: Record<string, string>): Promise<{ status: number; rawHeaders: string[]; body: Buffer }> {
  return new Promise((resolvePromise, reject) => {
    get(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

/**
 * Ratios are taken round by round (each row against the bare server of the same round), then the
 * median: drift on a shared machine moves both sides of a ratio together.
 */
function printTable(targets: Target[], samples: Map<Target, Sample[]>): void {
  /** The median over the rounds of one row's req/s over another's in the same round. */
  const against = (t: Target, other: Target): number => median(samples.get(t)!.map((s, round) => s.rps / samples.get(other)![round]!.rps));
  const bare = targets.find((t) => t.reference === true)!;
  const ratioOf = (t: Target): number => against(t, bare);
  const cpuAgainst = (t: Target, other: Target): number => median(samples.get(t)!.map((s, round) => s.cpuUs / samples.get(other)![round]!.cpuUs));
  const rows = targets.map((t) => {
    const s = samples.get(t)!;
    return [t.name, String(Math.round(median(s.map((x) => x.rps)))), ratioOf(t).toFixed(2), median(s.map((x) => x.p50Ms)).toFixed(2), median(s.map((x) => x.p99Ms)).toFixed(2), String(Math.max(...s.map((x) => x.rssMb))), median(s.map((x) => x.cpuUs)).toFixed(1)];
  });
  const header = ['server', 'req/s (median)', 'ratio to bare', 'p50 ms', 'p99 ms', 'peak RSS MB', 'CPU µs/answer'];
  process.stdout.write(`\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|\n`);
  for (const row of rows) process.stdout.write(`| ${row.join(' | ')} |\n`);
  const ceiling = targets.find((t) => t.name.startsWith('koa'));
  const memory = targets.find((t) => t.name === MEMORY_ROW);
  if (ceiling !== undefined && memory !== undefined) {
    process.stdout.write(`\nservice on memory storage against the Koa ceiling (same rounds): ${against(memory, ceiling).toFixed(2)}\n`);
  }
  const withHeaders = targets.find((t) => t.name === HEADERS_ROW);
  if (memory !== undefined) {
    const checks = [`against bare ${ratioOf(memory).toFixed(2)} (target >= 0.55)`];
    if (withHeaders !== undefined) {
      checks.push(`against bare node:http writing the service's headers too (same rounds) ${against(memory, withHeaders).toFixed(2)}, ` +
        `server CPU per answer ${cpuAgainst(memory, withHeaders).toFixed(2)} of its`);
    }
    process.stdout.write(`\nservice on memory storage: ${checks.join('; ')}\n`);
  }
  const production = targets.find((t) => t.name === PRODUCTION_ROW);
  const cacheOn = targets.find((t) => t.name === CACHE_ON_ROW);
  for (const dir of BASELINE_DIRS) {
    for (const [what, row, baseline] of [
      ['memory storage', memory, targets.find((t) => t.name === baselineRow(dir))],
      ['MySQL without Redis, response cache on', cacheOn, targets.find((t) => t.name === cacheOnBaselineRow(dir))],
      ['MySQL + Redis with production settings', production, targets.find((t) => t.name === productionBaselineRow(dir))],
    ] as const) {
      if (row === undefined || baseline === undefined) continue;
      process.stdout.write(`\nservice on ${what} against ${baseline.name} (same rounds): ${against(row, baseline).toFixed(3)}; ` +
        `to bare: ${ratioOf(row).toFixed(3)} this checkout, ${ratioOf(baseline).toFixed(3)} baseline; ` +
        `server CPU per answer ${cpuAgainst(row, baseline).toFixed(3)} of the baseline's (median of rounds)\n`);
    }
  }
  const metricsOff = targets.find((t) => t.name === METRICS_OFF_ROW);
  if (memory !== undefined && metricsOff !== undefined) {
    const rounds = samples.get(memory)!.map((s, round) => (s.rps / samples.get(metricsOff)![round]!.rps).toFixed(3));
    process.stdout.write(`\nservice on memory storage, metrics on against off (same rounds): ${against(memory, metricsOff).toFixed(3)} (rounds ${rounds.join(', ')}; target >= 0.97)\n`);
  }
  for (const topology of ['Sentinel', 'Cluster'] as const) {
    const row = targets.find((t) => t.name === topologyRow(topology));
    if (row === undefined || production === undefined) continue;
    process.stdout.write(`\nservice on MySQL + Redis ${topology} against one Redis (same rounds): ${against(row, production).toFixed(3)}; ` +
      `server CPU per answer ${cpuAgainst(row, production).toFixed(3)} of one Redis's (median of rounds)\n`);
  }
  if (production !== undefined) {
    const checks = [`against bare ${ratioOf(production).toFixed(2)} (target >= 0.35)`];
    if (memory !== undefined) checks.push(`against service on memory storage (same rounds) ${against(production, memory).toFixed(2)} (target >= 0.90)`);
    process.stdout.write(`\nservice on MySQL + Redis with production settings: ${checks.join('; ')}\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${reasonOf(error)}\n`);
  process.exit(1);
});
