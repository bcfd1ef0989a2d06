/**
 * Instructions a lookup, counted by valgrind's callgrind: a figure this machine's noise cannot
 * move, where the throughput bench's rows differ by up to 30 % between two runs of one checkout.
 *
 * The built service (`dist/main.js`, built here when missing or older than its sources) runs under
 * callgrind, one process a checkout and row. It answers a warm-up (the JIT's tiers, the caches),
 * then windows of N lookups on 8 keep-alive connections, 1,000 keys in rotation over 100 SKUs;
 * callgrind_control zeroes the counts before each window and writes them after it, so start,
 * warm-up and shutdown are not in the figure. V8 runs single-threaded (its compiler and collector
 * on the main thread, counted as the lookups make them work) with fixed seeds.
 *
 *   npm run bench:instructions -- [--baseline-dir <dir>[,<dir>...]] [--rows memory,production,mysql]
 *     [--lookups 5000] [--windows 3] [--warm-up 10000] [--runs 2] [--keep <dir>]
 *
 * Rows: `memory` (memory storage), `production` (MySQL + Redis, needs both; skipped with a line
 * without them), and, when asked for, `mysql` (MySQL storage without Redis, the response cache on:
 * each request reads its key, and its catalog's version before a held answer, from the database),
 * and `memory-traces-0`, `memory-traces-1`, `memory-traces-100`, `production-traces-1`: the row
 * with traces on, none, 1 % or 100 % of requests sampled, exported over OTLP to a sink of the bench's own. A baseline checkout needs its own node_modules. `--keep` keeps callgrind's files
 * (callgrind_annotate reads them) in a folder of your choosing.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { writeBenchCatalog, type BenchCatalog } from './bench-catalog.js';
import { openBenchRedis, type BenchRedis } from './bench-redis.js';
import { startOtlpSink, tracedEnv, type OtlpSink } from './otlp-sink.js';
import { freePort } from './server-process.js';
import { openMysqlBenchDatabase, type MysqlBenchDatabase } from './targets-mysql.js';

const { values } = parseArgs({
  options: {
    'baseline-dir': { type: 'string' },
    rows: { type: 'string', default: 'memory,production' },
    lookups: { type: 'string', default: '5000' },
    windows: { type: 'string', default: '3' },
    'warm-up': { type: 'string', default: '10000' },
    runs: { type: 'string', default: '2' },
    products: { type: 'string', default: '1000' },
    keys: { type: 'string', default: '1000' },
    keep: { type: 'string' },
  },
});

const LOOKUPS = Number(values.lookups);
const WINDOWS = Number(values.windows);
const WARM_UP = Number(values['warm-up']);
const RUNS = Number(values.runs);
const CONNECTIONS = 8;
const SKUS_IN_ROTATION = 100;
/**
 * V8 without background threads, with fixed seeds and a fixed young generation; no full collection
 * lands in a window (the old generation starts at 2 GB and the memory reducer, which starts one when
 * a timer finds the allocation slow, is off), so a window counts the lookups and not when the heap
 * happened to fill.
 */
const NODE_FLAGS = ['--single-threaded', '--hash-seed=1', '--random-seed=1', '--min-semi-space-size=16', '--max-semi-space-size=16',
  '--initial-old-space-size=2048', '--no-memory-reducer'];
const STARTUP_LIMIT_MS = 600_000;
/** 503s the warm-up sends again before it takes the service as down. */
const MAX_WARM_UP_503 = 1_000;
const SERVICE_HOST = '127.0.0.1';

if (![LOOKUPS, WINDOWS, RUNS].every((n) => Number.isInteger(n) && n >= 1) || !(Number.isInteger(WARM_UP) && WARM_UP >= 0)) {
  process.stderr.write('bench:instructions: --lookups, --windows and --runs must be counts of 1 or more, --warm-up of 0 or more\n');
  process.exit(2);
}
if (spawnSync('valgrind', ['--version']).error !== undefined) {
  process.stderr.write('bench:instructions: valgrind is not on the PATH (Debian: apt-get install valgrind)\n');
  process.exit(2);
}

interface Row {
  readonly name: string;
  readonly env: Record<string, string>;
}

/** Builds a checkout's `dist` when it is missing or older than any file under `src`. */
function ensureBuilt(dir: string): string {
  const entry = join(dir, 'dist', 'main.js');
  const newest = (folder: string): number => readdirSync(folder, { withFileTypes: true })
    .reduce((latest, item) => Math.max(latest, item.isDirectory() ? newest(join(folder, item.name)) : statSync(join(folder, item.name)).mtimeMs), 0);
  if (!existsSync(entry) || statSync(entry).mtimeMs < newest(join(dir, 'src'))) {
    process.stdout.write(`building ${dir}\n`);
    const built = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'inherit' });
    if (built.status !== 0) throw new Error(`the build of ${dir} failed`);
  }
  return entry;
}

/**
 * Sends `count` lookups on the agent's connections, `CONNECTIONS` at a time. In a window any answer
 * but 200 is an error; in the warm-up a 503 is counted and its lookup sent again: under callgrind
 * the service runs some fifty times slower, and while V8 compiles a large function the event loop
 * can stand past the database's one-second deadline.
 */
async function lookups(base: URL, agent: Agent, catalog: BenchCatalog, from: number, count: number, warmUp: { unavailable: number } | null = null): Promise<void> {
  let next = from;
  const end = from + count;
  const one = (i: number): Promise<void> => new Promise<void>((done, fail) => {
    const path = `/api/v1/public/sku/${catalog.skus[i % SKUS_IN_ROTATION]!}`;
    const req = request({ host: base.hostname, port: base.port, path, agent, headers: { Authorization: `Bearer ${catalog.keys[i % catalog.keys.length]!}` } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => { if (res.statusCode !== 200) body += chunk.toString(); });
      res.once('end', () => {
        if (res.statusCode === 200) done();
        else if (res.statusCode === 503 && warmUp !== null && warmUp.unavailable < MAX_WARM_UP_503) {
          warmUp.unavailable += 1;
          one(i).then(done, fail);
        } else fail(new Error(`lookup ${i}: ${path} answered ${res.statusCode} ${body}`));
      });
    });
    req.once('error', fail);
    req.end();
  });
  const worker = async (): Promise<void> => {
    while (next < end) await one(next++);
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
}

async function waitUntilReady(base: URL, exited: Promise<unknown>): Promise<void> {
  const server = { gone: false };
  void exited.then(() => { server.gone = true; });
  const deadline = Date.now() + STARTUP_LIMIT_MS;
  while (!server.gone && Date.now() < deadline) {
    try {
      // Ready: the key set held, Redis reached (/healthz, on a checkout without /readyz).
      const ready = await fetch(new URL('/readyz', base));
      if (ready.ok || (ready.status === 404 && (await fetch(new URL('/healthz', base))).ok)) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(server.gone ? 'the service exited before it was ready' : 'the service was not ready within 10 minutes');
}

/** Runs callgrind_control (`-z` zeroes the counts, `-d` writes them to a file) on a process under callgrind. */
function control(pid: number, option: '-z' | '-d'): Promise<void> {
  return new Promise((done, fail) => {
    // vgdb finds the process's pipes by the HOST its environment had, which is the service's setting here.
    const child = spawn('callgrind_control', [option, String(pid)], { env: { ...process.env, HOST: SERVICE_HOST }, stdio: ['ignore', 'pipe', 'inherit'] });
    let said = '';
    child.stdout.on('data', (chunk: Buffer) => { said += chunk.toString(); });
    child.once('error', fail);
    child.once('exit', (code) => (code === 0 && said.includes('OK') ? done() : fail(new Error(`callgrind_control ${option} ${pid}: ${said.trim() || `exit ${code}`}`))));
  });
}

/** What one window counted: every instruction, and those of V8's optimizing compiler and of full collections within them. */
interface Window {
  readonly all: number;
  readonly compiler: number;
  readonly fullCollections: number;
}

/** Reads dump `part` of `out` (`out.1`, `out.2`, ...) with callgrind_annotate, costs inclusive of what each function called. */
function readWindow(out: string, part: number): Window {
  const listed = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', '--auto=no', `${out}.${part}`], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (listed.status !== 0) throw new Error(`callgrind_annotate ${out}.${part}: ${listed.stderr.trim()}`);
  const cost = (pattern: RegExp): number => listed.stdout.split('\n')
    .filter((line) => pattern.test(line))
    .reduce((sum, line) => sum + Number(/^\s*([\d,]+)/.exec(line)?.[1]?.replaceAll(',', '') ?? 0), 0);
  const all = cost(/ PROGRAM TOTALS$/);
  if (all === 0) throw new Error(`callgrind's dump ${out}.${part} has no total`);
  return {
    all,
    compiler: cost(/:v8::internal::Runtime_CompileOptimized(OSR)?\(/),
    fullCollections: cost(/:v8::internal::MarkCompactCollector::CollectGarbage\(\)/),
  };
}

/**
 * One process of the service under callgrind: the warm-up, then `WINDOWS` windows of `LOOKUPS`
 * lookups, the counts zeroed before each and written after it; the instructions a lookup in each.
 */
async function countWindows(entry: string, row: Row, catalog: BenchCatalog, outDir: string): Promise<Window[]> {
  const port = await freePort();
  const out = join(outDir, `${basename(resolve(entry, '../..'))}-${row.name}-${process.hrtime.bigint()}.callgrind`);
  const child = spawn('valgrind', ['--tool=callgrind', `--log-file=${out}.log`, `--callgrind-out-file=${out}`, 'node', ...NODE_FLAGS, entry], {
    env: { ...process.env, ...row.env, PORT: String(port), HOST: SERVICE_HOST, METRICS_PORT: '0', PORTAL_PORT: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const base = new URL(`http://127.0.0.1:${port}`);
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const windows: Window[] = [];
  try {
    await waitUntilReady(base, exited);
    const warmUp = { unavailable: 0 };
    await lookups(base, agent, catalog, 0, WARM_UP, warmUp);
    if (warmUp.unavailable > 0) process.stdout.write(`${basename(resolve(entry, '../..'))}, ${row.name}: ${warmUp.unavailable} answers 503 in the warm-up, sent again\n`);
    for (let window = 1; window <= WINDOWS; window += 1) {
      await control(child.pid!, '-z');
      await lookups(base, agent, catalog, WARM_UP + (window - 1) * LOOKUPS, LOOKUPS);
      await control(child.pid!, '-d');
      windows.push(readWindow(out, window));
    }
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    agent.destroy();
  }
  // SIGTERM: the service stops as deployed, and valgrind removes the pipes vgdb reached it by.
  child.kill('SIGTERM');
  await exited;
  return windows;
}

const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
/**
 * The least window of each run, from every window of every run in order. What disturbs a window only
 * adds to it (V8 dropping optimized code and running it unoptimized until it compiles it again), so
 * the least is the lookup with its code settled; the median of three moved by 1.2 % between runs.
 */
const runFigures = (windows: readonly number[]): number[] =>
  Array.from({ length: windows.length / WINDOWS }, (_, run) => Math.min(...windows.slice(run * WINDOWS, (run + 1) * WINDOWS)));
const perLookup = (instructions: number): string => Math.round(instructions / LOOKUPS).toLocaleString('en');

async function main(): Promise<void> {
  const dirs = ['.', ...(values['baseline-dir']?.split(',').filter((dir) => dir !== '') ?? [])].map((dir) => resolve(dir));
  const entries = dirs.map(ensureBuilt);
  const work = mkdtempSync(join(tmpdir(), 'pcat-instructions-'));
  const outDir = values.keep === undefined ? work : resolve(values.keep);
  mkdirSync(outDir, { recursive: true });
  const catalog = writeBenchCatalog(join(work, 'catalog.json'), Number(values.products), Number(values.keys));
  const serviceEnv = { CATALOG_FILE: catalog.file, RATE_LIMIT_PER_MINUTE: '1000000000', MAX_CONNECTIONS_PER_ADDRESS: String(2 * CONNECTIONS) };
  const wanted = values.rows.split(',');
  const rows: Row[] = [];
  let database: MysqlBenchDatabase | null = null;
  let redis: BenchRedis | null = null;
  const sink: OtlpSink | null = wanted.some((name) => name.includes('-traces-')) ? await startOtlpSink() : null;
  const traced = (ratio: number): Record<string, string> => tracedEnv(sink!, ratio);
  try {
    if (wanted.includes('memory')) rows.push({ name: 'memory', env: serviceEnv });
    if (wanted.includes('memory-traces-0')) rows.push({ name: 'memory-traces-0', env: { ...serviceEnv, ...traced(0) } });
    if (wanted.includes('memory-traces-1')) rows.push({ name: 'memory-traces-1', env: { ...serviceEnv, ...traced(0.01) } });
    if (wanted.includes('memory-traces-100')) rows.push({ name: 'memory-traces-100', env: { ...serviceEnv, ...traced(1) } });
    const production = wanted.includes('production') || wanted.includes('production-traces-1');
    if (production || wanted.includes('mysql')) {
      database = await openMysqlBenchDatabase({ catalog, serviceEnv }, 'MySQL rows');
      redis = database === null || !production ? null : await openBenchRedis('production row');
      if (database !== null && redis !== null && wanted.includes('production')) rows.push({ name: 'production', env: { ...database.env, ...redis.env } });
      if (database !== null && redis !== null && wanted.includes('production-traces-1')) {
        rows.push({ name: 'production-traces-1', env: { ...database.env, ...redis.env, ...traced(0.01) } });
      }
      if (database !== null && wanted.includes('mysql')) rows.push({ name: 'mysql', env: { ...database.env, CACHE_TTL_MS: '30000' } });
    }
    process.stdout.write(`instructions a lookup, counted by callgrind in windows of ${LOOKUPS} lookups after ${WARM_UP} of warm-up; ` +
      `node ${NODE_FLAGS.join(' ')}; ${catalog.keys.length} keys, ${SKUS_IN_ROTATION} SKUs, ${CONNECTIONS} connections\n\n`);
    const figures = new Map<string, number[]>();
    for (let run = 1; run <= RUNS; run += 1) {
      for (const row of rows) {
        // On memory storage the checkouts' processes run at once: callgrind runs each on one thread, and its count does not
        // depend on the time taken. The MySQL rows' processes run one at a time: their database reads have a deadline of one second.
        const counted = row.name.startsWith('memory')
          ? await Promise.all(entries.map((entry) => countWindows(entry, row, catalog, outDir)))
          : await entries.reduce<Promise<Window[][]>>(async (done, entry) => [...(await done), await countWindows(entry, row, catalog, outDir)], Promise.resolve([]));
        counted.forEach((windows, i) => {
          const key = `${row.name}\t${dirs[i]!}`;
          figures.set(key, [...(figures.get(key) ?? []), ...windows.map((w) => (w.all - w.compiler) / LOOKUPS)]);
          const said = windows.map((w) => `${perLookup(w.all - w.compiler)} (the compiler ${perLookup(w.compiler)}` +
            `${w.fullCollections > 0 ? `, a full collection ${perLookup(w.fullCollections)}` : ''})`);
          process.stdout.write(`run ${run}, ${row.name}, ${dirs[i]!}: ${said.join('; ')}\n`);
        });
      }
    }
    process.stdout.write('\nInstructions a lookup, without the optimizing compiler\'s: the least window of each run (a window where V8 ' +
      'dropped optimized code and compiled it again counts a few per cent more while it ran unoptimized):\n\n' +
      '| row | checkout | each run | runs apart (max - min) / min | against this checkout |\n|---|---|---|---|---|\n');
    for (const row of rows) {
      const own = mean(runFigures(figures.get(`${row.name}\t${dirs[0]!}`)!));
      for (const dir of dirs) {
        const runs = runFigures(figures.get(`${row.name}\t${dir}`)!);
        const apart = (Math.max(...runs) - Math.min(...runs)) / Math.min(...runs);
        process.stdout.write(`| ${row.name} | ${dir === dirs[0] ? 'this checkout' : dir} | ${runs.map((n) => Math.round(n).toLocaleString('en')).join(', ')} | ` +
          `${(100 * apart).toFixed(2)} % | ${(mean(runs) / own).toFixed(3)} |\n`);
      }
    }
  } finally {
    await sink?.close();
    await redis?.cleanup();
    await database?.drop();
    if (values.keep === undefined) rmSync(work, { recursive: true, force: true });
    else rmSync(join(work, 'catalog.json'), { force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:instructions: ${(error as Error).message}\n`);
  process.exitCode = 1;
});
