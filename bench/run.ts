/**
 * `npm run bench`: req/s, p50/p99 latency and peak RSS of the service against a bare node:http
 * server writing the very same bytes, in the same run, pinned to separate cores where possible.
 * Figures are ratios to the bare server because machines here are shared and noisy.
 *
 * Options: --duration <s> (per run, default 8), --rounds <n> (default 3), --products <n> (default 10000),
 * --keys <n> (default 1000), --load wrk|autocannon (default: wrk when installed),
 * --only <text,...> (only rows whose name contains one of these, besides the bare reference).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeBenchCatalog } from './bench-catalog.js';
import { drive, loadGenerator, type Load } from './load.js';
import { type BenchContext, type Target } from './target.js';
import { mysqlTargets } from './targets-mysql.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    products: { type: 'string', default: '10000' },
    keys: { type: 'string', default: '1000' },
    load: { type: 'string' },
    only: { type: 'string' },
  },
});
const durationS = Number(values.duration);
const rounds = Number(values.rounds);
const cores = Number(spawnSync('nproc').stdout.toString().trim()) || 1;
const pinned = cores >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilUp(url: string): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`server did not come up at ${url}`);
}

/** The server runs on core 0; the load generator gets core 1. */
function startServer(script: string, env: Record<string, string>): ChildProcess {
  const node = [process.execPath, '--import', 'tsx', script];
  const [command, ...args] = pinned ? ['taskset', '-c', '0', ...node] : node;
  return spawn(command!, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
}

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

interface Sample extends Load {
  readonly rssMb: number;
}

async function measure(target: Target, context: BenchContext): Promise<Sample> {
  const port = await freePort();
  const child = startServer(target.script, { ...target.env, PORT: String(port), BODY_FILE: context.bodyFile });
  // With `taskset`, the child is taskset itself until it execs node: same pid.
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitUntilUp(`${base}/healthz`);
    await drive(context.generator, base, context, 2, pinned); // warm-up: JIT, caches
    const load = await drive(context.generator, base, context, durationS, pinned);
    return { ...load, rssMb: peakRssMb(child.pid!) };
  } finally {
    child.kill('SIGKILL');
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pcat-bench-'));
  const catalog = writeBenchCatalog(join(dir, 'catalog.json'), Number(values.products), Number(values.keys));
  const generator = values.load === 'autocannon' || values.load === 'wrk' ? values.load : loadGenerator();
  const serviceEnv = { CATALOG_FILE: catalog.file, RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'info', HOST: '127.0.0.1' };
  const context: BenchContext = { dir, catalog, generator, bodyFile: join(dir, 'body.json'), serviceEnv };

  // The bare servers write the bytes the service itself answers for the first SKU.
  await captureBody(context);

  const only = values.only?.split(',').filter((text) => text !== '');
  const targets: Target[] = ([
    { name: 'bare node:http, pre-built bytes', script: 'bench/bare-server.ts', env: {}, reference: true },
    { name: 'bare node:http, JSON.stringify per request', script: 'bench/bare-server.ts', env: { MODE: 'stringify' } },
    { name: 'koa + router + helmet, cached bytes', script: 'bench/koa-ceiling.ts', env: {} },
    { name: 'service, memory storage', script: 'src/main.ts', env: serviceEnv },
    ...(only === undefined || only.some((text) => /mysql/i.test(text)) ? await mysqlTargets(context) : []),
  ] as Target[]).filter((t) => only === undefined || t.reference === true || only.some((text) => t.name.includes(text)));

  process.stdout.write(`bench: ${targets.length} rows x ${rounds} rounds x ${durationS}s, ${catalog.skus.length} products, ${catalog.keys.length} keys, ` +
    `load ${generator} (50 connections), ${pinned ? 'server on core 0, load on core 1' : 'not pinned'}, ${cores} cores, node ${process.version}\n`);
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
  printTable(targets, samples);
  for (const target of targets) await target.cleanup?.();
  if (only === undefined) spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/bounded-memory.ts'], { stdio: 'inherit' });
}

async function captureBody(context: BenchContext): Promise<void> {
  const port = await freePort();
  const child = startServer('src/main.ts', { ...context.serviceEnv, PORT: String(port) });
  try {
    await waitUntilUp(`http://127.0.0.1:${port}/healthz`);
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/public/sku/${context.catalog.skus[0]!}`, {
      headers: { Authorization: `Bearer ${context.catalog.keys[0]!}` },
    });
    if (response.status !== 200) throw new Error(`probe answered ${response.status}`);
    writeFileSync(context.bodyFile, Buffer.from(await response.arrayBuffer()));
  } finally {
    child.kill('SIGKILL');
  }
}

/**
 * Ratios are taken round by round (each row against the bare server of the same round), then the
 * median: drift on a shared machine moves both sides of a ratio together.
 */
function printTable(targets: Target[], samples: Map<Target, Sample[]>): void {
  const bare = samples.get(targets.find((t) => t.reference === true)!)!;
  const ratioOf = (t: Target): number => median(samples.get(t)!.map((s, round) => s.rps / bare[round]!.rps));
  const rows = targets.map((t) => {
    const s = samples.get(t)!;
    return [t.name, String(Math.round(median(s.map((x) => x.rps)))), ratioOf(t).toFixed(2), median(s.map((x) => x.p50Ms)).toFixed(2), median(s.map((x) => x.p99Ms)).toFixed(2), String(Math.max(...s.map((x) => x.rssMb)))];
  });
  const header = ['server', 'req/s (median)', 'ratio to bare', 'p50 ms', 'p99 ms', 'peak RSS MB'];
  process.stdout.write(`\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|\n`);
  for (const row of rows) process.stdout.write(`| ${row.join(' | ')} |\n`);
  const ceiling = targets.find((t) => t.name.startsWith('koa'));
  const memory = targets.find((t) => t.name === 'service, memory storage');
  if (ceiling !== undefined && memory !== undefined) {
    const ofCeiling = median(samples.get(memory)!.map((s, round) => s.rps / samples.get(ceiling)![round]!.rps));
    process.stdout.write(`\nservice on memory storage against the Koa ceiling (same rounds): ${ofCeiling.toFixed(2)}\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
