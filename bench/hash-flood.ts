/**
 * `npm run bench:hash-flood [-- --baseline-dir <checkout>] [--entries 40000] [--rounds 1]`: the
 * response cache's hash flood over HTTP, on MySQL storage without Redis (where a key's prefix is
 * only the partner id and the kind, known to the partner). One partner (mallory) fills the cache
 * with --entries remembered misses in batches of 100 SKUs, sent as fast as answered (the state the
 * attack reached after minutes at its limit), then goes on at its limit, 100 batches a minute (a
 * batch every 600 ms, 20 of them), while another partner (victim) looks up its own products one at
 * a time: products it asked before (held answers) and products it had not (a database read, then a
 * store). The SKUs are either made to fall in one slot of the old unkeyed key table
 * (test/support/hash-flood.ts) or random, the control. Printed for this checkout and, in the same
 * rounds, a baseline checkout: the victim's median and p99 quiet, during the paced flood and after
 * it, the flood's batches, and the victim's held-answer median during the paced flood against quiet.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { hashApiKey } from '../src/domain/api-key.js';
import { fnvCollidingSkus, randomSkus } from '../test/support/hash-flood.js';
import { benchKey, benchProduct } from './bench-catalog.js';
import { median, percentile } from './percentile.js';
import { withServer } from './server-process.js';
import { openMysqlBenchDatabase } from './targets-mysql.js';

const { values } = parseArgs({
  options: {
    'baseline-dir': { type: 'string' },
    entries: { type: 'string', default: '40000' },
    rounds: { type: 'string', default: '1' },
  },
});
const entries = Number(values.entries);
const rounds = Number(values.rounds);
const VICTIM_PRODUCTS = 4_000;
/** The victim's products asked before the flood, and asked again all along: held answers. */
const HELD = 200;
const victimKey = benchKey(0);
const floodKey = benchKey(1);

const dir = mkdtempSync(join(tmpdir(), 'pcat-hash-flood-'));
const file = join(dir, 'catalog.json');
writeFileSync(file, JSON.stringify({
  format: 'partner-catalog/v1',
  partners: [
    { id: 'victim', name: 'Victim Outdoor Co.', api_keys: [{ id: 'victim-0', sha256: hashApiKey(victimKey) }], products: Array.from({ length: VICTIM_PRODUCTS }, (_, i) => benchProduct(`V-${i}`, i)) },
    { id: 'mallory', name: 'Mallory Trading', api_keys: [{ id: 'mallory-0', sha256: hashApiKey(floodKey) }], products: [benchProduct('M-0', 0)] },
  ],
}));
const serviceEnv = { RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'warn', HOST: '127.0.0.1', MAX_CONNECTIONS_PER_ADDRESS: '64' };
const database = await openMysqlBenchDatabase({ catalog: { file, keys: [], skus: [] }, serviceEnv }, 'hash flood');
if (database === null) process.exit(1);
/** The paced flood's batches: 100 batches a minute, the limit's pace, for 12 s. */
const PACED_BATCHES = 20;
const PACE_MS = 600;
const floodSkus = {
  'made to collide': fnvCollidingSkus('mallory\u0000s', entries + PACED_BATCHES * 100, 18),
  random: randomSkus(entries + PACED_BATCHES * 100, 9),
};
type FloodKind = keyof typeof floodSkus;

/** Answers other than 200, by row and status, over the whole run: printed after the table. */
const refused = new Map<string, number>();
let currentRow = '';

/** How long the lookup took, in ms; an answer other than 200 is counted in `refused` too. */
async function get(base: string, path: string, key: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  const status = `${currentRow}: ${response.status}`;
  if (response.status !== 200) refused.set(status, (refused.get(status) ?? 0) + 1);
  return performance.now() - started;
}

interface Phase {
  held: number[];
  fresh: number[];
}

/** The victim's lookups, one at a time, until `until` says stop (at least `least` of each kind). */
async function victim(base: string, freshFrom: { next: number }, until: () => boolean, least: number): Promise<Phase> {
  const phase: Phase = { held: [], fresh: [] };
  for (let i = 0; !until() || phase.held.length < least; i += 1) {
    phase.held.push(await get(base, `/api/v1/public/sku/V-${i % HELD}`, victimKey));
    const fresh = HELD + (freshFrom.next++ % (VICTIM_PRODUCTS - HELD));
    phase.fresh.push(await get(base, `/api/v1/public/sku/V-${fresh}`, victimKey));
  }
  return phase;
}

interface Reading {
  quiet: Phase;
  during: Phase;
  after: Phase;
  fill: number[];
  paced: number[];
}

async function measure(script: string, kind: FloodKind): Promise<Reading> {
  const skus = floodSkus[kind];
  const batchOf = (at: number): string => `/api/v1/public/products?sku=${skus.slice(at, at + 100).join(',')}`;
  return withServer(script, { ...database!.env }, async (base) => {
    for (let i = 0; i < HELD; i += 1) await get(base, `/api/v1/public/sku/V-${i}`, victimKey);
    const freshFrom = { next: 0 };
    // Warmed up first, so that the quiet figures are not the just-started process's.
    await victim(base, { next: 0 }, () => true, 2_000);
    const quiet = await victim(base, freshFrom, () => true, 500);
    // The fill: two connections' worth of batches at once, each waiting for its answer.
    const fill: number[] = [];
    const send = async (lane: number): Promise<void> => {
      for (let at = lane * 100; at < entries; at += 200) fill.push(await get(base, batchOf(at), floodKey));
    };
    await Promise.all([send(0), send(1)]);
    const paced: number[] = [];
    let done = false;
    const flood = (async () => {
      for (let i = 0; i < PACED_BATCHES; i += 1) {
        const started = performance.now();
        paced.push(await get(base, batchOf(entries + i * 100), floodKey));
        await sleep(Math.max(0, PACE_MS - (performance.now() - started)));
      }
      done = true;
    })();
    const during = await victim(base, freshFrom, () => done, 50);
    await flood;
    const after = await victim(base, freshFrom, () => true, 500);
    return { quiet, during, after, fill, paced };
  });
}

const checkouts = [{ name: 'this checkout', script: resolve('src/main.ts') }];
if (values['baseline-dir'] !== undefined) checkouts.push({ name: `baseline ${basename(resolve(values['baseline-dir']))}`, script: resolve(values['baseline-dir'], 'src/main.ts') });
const kinds = Object.keys(floodSkus) as FloodKind[];
const rowName = (checkout: string, kind: FloodKind): string => `${checkout}, ${kind}`;
const readings = new Map<string, Reading[]>(checkouts.flatMap((c) => kinds.map((kind) => [rowName(c.name, kind), []] as [string, Reading[]])));
try {
  for (let round = 0; round < rounds; round += 1) {
    for (const kind of kinds) {
      for (const checkout of checkouts) {
        currentRow = rowName(checkout.name, kind);
        readings.get(currentRow)!.push(await measure(checkout.script, kind));
        process.stderr.write(`round ${round + 1}: ${rowName(checkout.name, kind)} done\n`);
      }
    }
  }
} finally {
  await database.drop();
}

const ms = (values: number[]): string => `${median(values).toFixed(2)} / ${percentile(values, 99).toFixed(2)}`;
const all = (list: Reading[], pick: (r: Reading) => number[]): number[] => list.flatMap(pick);
process.stdout.write(`\nhash flood on MySQL storage without Redis: ${entries} SKUs in batches of 100 from one partner, then ${PACED_BATCHES} more at its limit's pace; another partner's lookups (ms, median / p99), ${rounds} round(s)\n`);
process.stdout.write('| checkout, SKUs | held, quiet | held, during | held, after | new, quiet | new, during | new, after | fill batch | paced batch | held during / quiet (medians) |\n|---|---|---|---|---|---|---|---|---|---|\n');
for (const [name, list] of readings) {
  const held = (pick: (r: Reading) => Phase): number[] => all(list, (r) => pick(r).held);
  const fresh = (pick: (r: Reading) => Phase): number[] => all(list, (r) => pick(r).fresh);
  const ratio = median(held((r) => r.during)) / median(held((r) => r.quiet));
  process.stdout.write(`| ${name} | ${ms(held((r) => r.quiet))} | ${ms(held((r) => r.during))} | ${ms(held((r) => r.after))} | ${ms(fresh((r) => r.quiet))} | ${ms(fresh((r) => r.during))} | ${ms(fresh((r) => r.after))} | ${ms(all(list, (r) => r.fill))} | ${ms(all(list, (r) => r.paced))} | ${ratio.toFixed(2)} |\n`);
}
process.stdout.write(`answers other than 200: ${refused.size === 0 ? 'none' : [...refused].map(([status, count]) => `${count} x ${status}`).join(', ')}\n`);
