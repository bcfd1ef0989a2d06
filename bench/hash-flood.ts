/**
 * `npm run bench:hash-flood [-- --baseline-dir <checkout>] [--entries 40000] [--rounds 1]`: the
 * response cache's hash flood over HTTP, on MySQL storage without Redis (where a key's prefix is
 * only the partner id and the kind, known to the partner). One partner (mallory) sends batches of
 * 100 SKUs made to fall in one slot of the old unkeyed key table (test/support/hash-flood.ts), each
 * a remembered miss, --entries of them; another partner (victim) looks up its own products one at
 * a time throughout: products it asked before (held answers) and products it had not (a database
 * read, then a store). The victim's median and p99 are printed quiet, during the flood and after
 * it, with the flood's batches, for this checkout and, in the same rounds, a baseline checkout.
 * The service's rate limit is set out of the way, so the flood takes seconds, not the 11 minutes
 * of the attack at 100 batches a minute.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { hashApiKey } from '../src/domain/api-key.js';
import { fnvCollidingSkus } from '../test/support/hash-flood.js';
import { benchKey, benchProduct } from './bench-catalog.js';
import { median, percentile } from './percentile.js';
import { withServer } from './server-process.js';
import type { BenchContext } from './target.js';
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
const database = await openMysqlBenchDatabase({ catalog: { file, keys: [], skus: [] }, serviceEnv } as unknown as BenchContext, 'hash flood');
if (database === null) process.exit(1);
const colliding = fnvCollidingSkus('mallory\u0000s', entries, 18);

async function get(base: string, path: string, key: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
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
  batches: number[];
}

async function measure(script: string): Promise<Reading> {
  return withServer(script, { ...database!.env }, async (base) => {
    for (let i = 0; i < HELD; i += 1) await get(base, `/api/v1/public/sku/V-${i}`, victimKey);
    const freshFrom = { next: 0 };
    const quiet = await victim(base, freshFrom, () => true, 500);
    const batches: number[] = [];
    let done = false;
    const flood = (async () => {
      // Two connections' worth of batches at once, as a client that waits for each answer.
      const send = async (lane: number): Promise<void> => {
        for (let at = lane * 100; at < colliding.length; at += 200) batches.push(await get(base, `/api/v1/public/products?sku=${colliding.slice(at, at + 100).join(',')}`, floodKey));
      };
      await Promise.all([send(0), send(1)]);
      done = true;
    })();
    const during = await victim(base, freshFrom, () => done, 50);
    await flood;
    const after = await victim(base, freshFrom, () => true, 500);
    return { quiet, during, after, batches };
  });
}

const checkouts = [{ name: 'this checkout', script: resolve('src/main.ts') }];
if (values['baseline-dir'] !== undefined) checkouts.push({ name: `baseline ${basename(resolve(values['baseline-dir']))}`, script: resolve(values['baseline-dir'], 'src/main.ts') });
const readings = new Map<string, Reading[]>(checkouts.map((c) => [c.name, []]));
try {
  for (let round = 0; round < rounds; round += 1) {
    for (const checkout of checkouts) {
      readings.get(checkout.name)!.push(await measure(checkout.script));
      process.stderr.write(`round ${round + 1}: ${checkout.name} done\n`);
    }
  }
} finally {
  await database.drop();
}

const ms = (values: number[]): string => `${median(values).toFixed(2)} / ${percentile(values, 99).toFixed(2)}`;
const all = (list: Reading[], pick: (r: Reading) => number[]): number[] => list.flatMap(pick);
process.stdout.write(`\nhash flood: ${entries} SKUs made to collide in the old key table, in batches of 100 from one partner, on MySQL storage without Redis; another partner's lookups (ms, median / p99), ${rounds} round(s)\n`);
process.stdout.write('| checkout | held, quiet | held, during | held, after | new, quiet | new, during | new, after | flood batch | held during / quiet (medians) |\n|---|---|---|---|---|---|---|---|---|\n');
for (const [name, list] of readings) {
  const held = (pick: (r: Reading) => Phase): number[] => all(list, (r) => pick(r).held);
  const fresh = (pick: (r: Reading) => Phase): number[] => all(list, (r) => pick(r).fresh);
  const ratio = median(held((r) => r.during)) / median(held((r) => r.quiet));
  process.stdout.write(`| ${name} | ${ms(held((r) => r.quiet))} | ${ms(held((r) => r.during))} | ${ms(held((r) => r.after))} | ${ms(fresh((r) => r.quiet))} | ${ms(fresh((r) => r.during))} | ${ms(fresh((r) => r.after))} | ${ms(all(list, (r) => r.batches))} | ${ratio.toFixed(2)} |\n`);
}
