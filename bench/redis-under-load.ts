import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedisServer } from '../test/support/redis.js';
import { writeBenchCatalog } from './bench-catalog.js';
import { cores, waitUntilUp } from './server-process.js';

/*
 * One instance (npm start: memory storage, RATE_LIMIT_STORE=redis) on a healthy redis-server of
 * this script's own, for a given number of minutes, while the machine's CPU is taken: a busy loop
 * per core, 32 clients asking as fast as they are answered, and every 2 s the instance is not run at
 * all for 100 to 500 ms (SIGSTOP, then SIGCONT), as a starved process on an overloaded host is not,
 * whatever it was waiting for meanwhile. Redis is never touched, so every
 * switch to the in-process limiter is a false alarm. Prints, each minute and at the end, the
 * requests answered, the times the instance fell back to counting in-process (its warning line),
 * the counts given up as slow and counted on the instance's share (pcat_rate_limiter_redis_slow_counts_total),
 * and what else it logged about Redis.
 * Usage: npx tsx bench/redis-under-load.ts [minutes]   (default 10, the audit's goal)
 */

const minutes = Number(process.argv[2] ?? 10);
const CLIENTS = 32;
const KEYS = 100;
const STALL_EVERY_MS = 2_000;

const dir = mkdtempSync(join(tmpdir(), 'pcat-redis-load-'));
const catalog = writeBenchCatalog(join(dir, 'catalog.json'), 50, KEYS);
const redis = await startRedisServer(await freePort());
const port = await freePort();
const metricsPort = await freePort();
const lines: string[] = [];
const service = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
  env: {
    ...process.env,
    PORT: String(port),
    PORTAL_PORT: '0',
    METRICS_PORT: String(metricsPort),
    STORAGE: 'memory',
    CATALOG_FILE: catalog.file,
    RATE_LIMIT_STORE: 'redis',
    REDIS_URL: redis.url,
    RATE_LIMIT_PER_MINUTE: '1000000000',
    LOG_LEVEL: 'info',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let partial = '';
service.stdout.on('data', (chunk: Buffer) => {
  const text = partial + chunk.toString('utf8');
  const parts = text.split('\n');
  partial = parts.pop()!;
  // Request lines are many and say nothing here; what the rate limiter logs is kept.
  for (const line of parts) if (line.includes('rate limiter')) lines.push(line);
});
const burners: ChildProcess[] = [];
const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
let answered = 0;
/** Answers other than 200, by status or error code. */
const others = new Map<string, number>();
const other = (what: string): void => {
  others.set(what, (others.get(what) ?? 0) + 1);
};
let running = true;
let stalls = 0;

/** Stops the instance for 100 to 500 ms every STALL_EVERY_MS, until the run ends. */
async function stall(): Promise<void> {
  const over = (): boolean => !running;
  while (!over()) {
    await new Promise((resolve) => setTimeout(resolve, STALL_EVERY_MS));
    if (over()) return;
    service.kill('SIGSTOP');
    stalls += 1;
    await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 400));
    service.kill('SIGCONT');
  }
}

function ask(key: string, sku: string): Promise<void> {
  return new Promise((resolve) => {
    const req = request(`http://127.0.0.1:${port}/api/v1/public/sku/${sku}`, { agent, headers: { 'X-API-Key': key } }, (res) => {
      let body = '';
      if (res.statusCode === 200) res.resume();
      else res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', () => {
        if (res.statusCode === 200) answered += 1;
        else other(`${String(res.statusCode)} ${/"error":"([a-z_]+)"/.exec(body)?.[1] ?? ''}`.trim());
        resolve();
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      other(error.code ?? error.message);
      resolve();
    });
    req.end();
  });
}

async function client(n: number): Promise<void> {
  for (let i = n; running; i += CLIENTS) await ask(catalog.keys[i % KEYS]!, catalog.skus[i % catalog.skus.length]!);
}

const count = (pattern: RegExp): number => lines.filter((l) => pattern.test(l)).length;
async function slowCounts(): Promise<string> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return /^pcat_rate_limiter_redis_slow_counts_total (\d+)/m.exec(text)?.[1] ?? '?';
  } catch {
    return '?';
  }
}
const report = async (elapsedS: number): Promise<void> => {
  const slow = await slowCounts();
  const otherText = others.size === 0 ? 'none other' : [...others].map(([what, n]) => `${n} ${what}`).join(', ');
  process.stdout.write(`${(elapsedS / 60).toFixed(1)} min: ${answered} answered 200 (${otherText}), ${stalls} stalls; `
    + `fell back to in-process counting ${count(/Redis unavailable/)} times, Redis back ${count(/Redis is back/)} times; ${slow} counts given up as slow\n`);
};

try {
  await waitUntilUp(`http://127.0.0.1:${port}/healthz`);
  for (let i = 0; i < cores; i += 1) burners.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  process.stdout.write(`${minutes} min under load: ${cores} busy loops, ${CLIENTS} clients, a 100-500 ms stall every ${STALL_EVERY_MS / 1000} s, Redis healthy throughout\n`);
  const clients = [...Array.from({ length: CLIENTS }, (_, n) => client(n)), stall()];
  const started = performance.now();
  for (let minute = 1; minute <= minutes; minute += 1) {
    await new Promise((resolve) => setTimeout(resolve, started + minute * 60_000 - performance.now()));
    await report((performance.now() - started) / 1000);
  }
  running = false;
  await Promise.all(clients);
  process.stdout.write(`fallbacks: ${count(/Redis unavailable/)} in ${minutes} min\n`);
  for (const line of lines) process.stdout.write(`  ${line}\n`);
} finally {
  running = false;
  service.kill('SIGCONT');
  for (const burner of burners) burner.kill('SIGKILL');
  service.kill('SIGKILL');
  agent.destroy();
  await redis.kill();
  rmSync(dir, { recursive: true, force: true });
}
