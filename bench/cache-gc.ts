/**
 * `npx tsx bench/cache-gc.ts [answers] [--pinned]`: what the response cache's answers cost the
 * garbage collector. It fills the service's own response cache (CachedProductCatalog at its default
 * bounds, answers made as the MySQL catalog makes them, `LookupAnswer.ofStoredText`) with
 * `answers` (default 200,000) different SKUs of 3.3 KB, plus half as many again so that it evicts,
 * while making about 16 KB of short-lived objects per answer, as a request does. It prints the
 * collections by kind (count, total and longest pause in ms) and what the longest full
 * collection's pause was spent on (V8's `--trace-gc-nvp` phases), beside a floor: the same keys in
 * a Map holding numbers only (no object per answer). The event loop is held for a whole pause, so
 * the longest one lands on every request in flight: it is what a cold lookup's tail is made of.
 * Run it pinned to one core (`taskset -c 0 npx tsx ...`) to see the bench's conditions, where the
 * collector's helper threads share the service's core.
 */
import { spawnSync } from 'node:child_process';
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { CachedProductCatalog } from '../src/adapters/cache/cached-product-catalog.js';
import type { ProductCatalog } from '../src/application/lookup/product-catalog.js';
import { LookupAnswer } from '../src/domain/lookup-answer.js';
import type { Sku } from '../src/domain/sku.js';

const BODY_BYTES = 3_300;
const KINDS: Record<number, string> = { 1: 'scavenge', 2: 'minor mark-sweep', 4: 'full (mark-compact)', 8: 'incremental marking step', 16: 'weak callbacks' };

interface Pause { readonly kind: string; readonly ms: number }

/** Fills, in this process, and prints one JSON line of the pauses seen. */
async function fill(mode: 'cache' | 'numbers', answers: number): Promise<void> {
  const pauses: Pause[] = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0;
      pauses.push({ kind: KINDS[kind] ?? String(kind), ms: entry.duration });
    }
  }).observe({ entryTypes: ['gc'] });
  const text = Buffer.alloc(BODY_BYTES, 'a');
  let n = 0;
  const stored: ProductCatalog = {
    findBySku: () => Promise.resolve(LookupAnswer.ofStoredText(text, `"${(n += 1).toString(36).padStart(32, '0')}"`)),
    findById: () => Promise.resolve(null),
    findManyBySku: () => Promise.resolve([]),
    findManyById: () => Promise.resolve([]),
  };
  const cache = new CachedProductCatalog(stored, { ttlMs: 30_000 });
  const numbers = new Map<string, number>();
  let garbage: unknown[] = [];
  const started = performance.now();
  for (let i = 0; i < answers * 1.5; i += 1) {
    for (let j = 0; j < 40; j += 1) garbage.push({ i, j, text: `x${j}`, pair: [i, j] });
    if (garbage.length > 4_000) garbage = [];
    const sku = `B-${i % Math.round(answers * 1.2)}` as Sku;
    if (mode === 'cache') {
      await cache.findBySku('bench', sku);
    } else {
      numbers.set(`bench\u0000s${sku}`, i);
      if (numbers.size > answers) numbers.delete(numbers.keys().next().value!);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 100));
  const byKind: Record<string, { count: number; totalMs: number; longestMs: number }> = {};
  for (const { kind, ms } of pauses) {
    const figures = (byKind[kind] ??= { count: 0, totalMs: 0, longestMs: 0 });
    figures.count += 1;
    figures.totalMs = Math.round(figures.totalMs + ms);
    figures.longestMs = Math.max(figures.longestMs, Math.round(ms * 10) / 10);
  }
  process.stdout.write(`${JSON.stringify({ mode, seconds: Math.round(seconds * 10) / 10, held: mode === 'cache' ? cache.entries : numbers.size, byKind })}\n`);
}

/** The phases of the longest full collection of a child's run, from --trace-gc-nvp. */
function longestFullCollection(lines: string): Record<string, number> {
  let longest: Record<string, number> = {};
  for (const line of lines.split('\n')) {
    if (!line.includes('gc=mc')) continue;
    const fields = Object.fromEntries(line.trim().split(/\s+/).map((pair) => pair.split('=')).filter(([, v]) => v !== undefined && /^[0-9.]+$/.test(v)).map(([k, v]) => [k!, Number(v)]));
    if ((fields.pause ?? 0) > (longest.pause ?? 0)) longest = fields;
  }
  const phases = ['pause', 'mark', 'mark.full_closure_parallel', 'mark.ephemeron.marking', 'finish', 'finish.sweep_array_buffers', 'evacuate', 'sweep', 'clear'];
  return Object.fromEntries(phases.filter((phase) => longest[phase] !== undefined).map((phase) => [phase, longest[phase]!]));
}

const [mode, count] = process.argv.slice(2);
if (mode === 'cache' || mode === 'numbers') {
  await fill(mode, Number(count));
} else {
  const answers = Number(mode ?? 200_000);
  for (const which of ['cache', 'numbers'] as const) {
    const run = spawnSync(process.execPath, ['--trace-gc-nvp', '--import', 'tsx', 'bench/cache-gc.ts', which, String(answers)], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    const result = run.stdout.split('\n').find((line) => line.startsWith('{'));
    process.stdout.write(`${which === 'cache' ? 'the response cache' : 'floor: keys and numbers only'}: ${result ?? `failed: ${run.stderr}`}\n`);
    process.stdout.write(`  its longest full collection, ms by phase: ${JSON.stringify(longestFullCollection(run.stdout))}\n`);
  }
}
