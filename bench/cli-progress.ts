/**
 * When `import` and `check` print their progress lines, as a new user sees them: `npm run cli` (tsx)
 * on a fresh 20,000-product file into a fresh database, stderr a pipe. Prints when each line came,
 * counted from the process's spawn, and the longest wait between two.
 *
 *   npx tsx bench/cli-progress.ts [products] [--prod]   (DATABASE_URL's server, default root@127.0.0.1:3306)
 *   npx tsx bench/cli-progress.ts [products] --write <file>
 *
 * --prod runs `npm run cli:prod`'s command (dist/, built) instead. --write only writes the catalog
 * file, to time `import` and `check` on it by hand (docs/performance-history.md, a million products).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createPool } from 'mysql2/promise';
import { writeBenchCatalog } from './bench-catalog.js';

const products = Number(process.argv.slice(2).find((arg) => /^[0-9]+$/.test(arg)) ?? 20_000);
const writeTo = process.argv.includes('--write') ? process.argv[process.argv.indexOf('--write') + 1] : undefined;
const program = process.argv.includes('--prod') ? ['dist/cli.js'] : ['--import', 'tsx', 'src/cli.ts'];
const server = new URL(process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/');
const database = `pcat_progress_${process.pid}`;
const databaseUrl = new URL(`/${database}`, server).href;

interface Run {
  readonly ms: number;
  readonly lines: readonly { readonly at: number; readonly text: string }[];
  readonly stdout: string;
}

/** The CLI as `npm run cli` starts it, stderr read line by line as it comes. */
function cli(args: readonly string[]): Promise<Run> {
  const start = performance.now();
  const child = spawn(process.execPath, [...program, ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: { at: number; text: string }[] = [];
  let pending = '';
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    const at = performance.now() - start;
    pending += chunk.toString();
    const complete = pending.split('\n');
    pending = complete.pop()!;
    for (const text of complete) lines.push({ at, text });
  });
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`cli ${args.join(' ')} exited ${String(code)}: ${lines.map((l) => l.text).join('\n')}${pending}`));
      else resolve({ ms: performance.now() - start, lines, stdout });
    });
  });
}

const print = (line: string): void => void process.stdout.write(`${line}\n`);

function report(name: string, run: Run): void {
  const times = run.lines.map((line) => line.at);
  const gaps = times.slice(1).map((at, i) => at - times[i]!);
  print(`${name}: ${(run.ms / 1000).toFixed(1)} s in all, ${run.lines.length} progress lines; ` +
    `first at ${((times[0] ?? Number.NaN) / 1000).toFixed(2)} s after spawn, longest gap ${(Math.max(0, ...gaps) / 1000).toFixed(2)} s; ` +
    `stdout ${run.stdout.length} bytes, ${JSON.parse(run.stdout) === null ? 'null' : 'parsed as JSON'}`);
  for (const line of run.lines) print(`  ${(line.at / 1000).toFixed(2).padStart(6)} s  ${line.text}`);
}

if (writeTo !== undefined) {
  writeBenchCatalog(writeTo, products, 2);
  print(`${products.toLocaleString('en-US')} products, ${((await stat(writeTo)).size / 1_000_000).toFixed(1)} MB: ${writeTo}`);
  process.exit(0);
}

const dir = await mkdtemp(join(tmpdir(), 'pcat-progress-'));
const admin = createPool({ uri: server.href });
try {
  await admin.query(`create database \`${database}\` character set utf8mb4 collate utf8mb4_bin`);
  const { file } = writeBenchCatalog(join(dir, 'catalog.json'), products, 2);
  print(`${products.toLocaleString('en-US')} products, ${((await stat(file)).size / 1_000_000).toFixed(1)} MB; database ${database}`);
  await cli(['migrate']);
  report('import', await cli(['import', file, '--json']));
  report('check', await cli(['check', file, '--json']));
} finally {
  await admin.query(`drop database if exists \`${database}\``);
  await admin.end();
  await rm(dir, { recursive: true, force: true });
}
