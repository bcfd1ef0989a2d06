/**
 * `npm run bench:cache-keys [-- --baseline-dir <checkout>]`: what the response cache's key table
 * costs a lookup, in the ring alone (AnswerRing, no HTTP), and what a partner choosing its SKUs can
 * make it cost. With a baseline checkout (a worktree of an older commit), its ring runs in the same
 * process, in alternating rounds, and each figure is printed beside it as a ratio.
 *
 * Rows, each the median of --rounds rounds, in ns an operation:
 * - hit: a key held, asked again (its ready copy handed out), with the service's key shape on MySQL
 *   storage with Redis (partner, epoch, catalog token, kind, then the SKU);
 * - miss: a key not held;
 * - store: a remembered miss stored, in a ring holding --entries entries;
 * - flood store, random / made to collide: --entries SKUs under one partner's prefix without Redis
 *   (partner id, kind), at random or built to fall in one slot of the old unkeyed table
 *   (test/support/hash-flood.ts), each stored, then asked again: ns a store, then a hit of another
 *   partner's held answers after it.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { fnvCollidingSkus, randomSkus } from '../test/support/hash-flood.js';
import { median } from './percentile.js';

const { values } = parseArgs({
  options: {
    'baseline-dir': { type: 'string' },
    rounds: { type: 'string', default: '5' },
    entries: { type: 'string', default: '40000' },
  },
});
const rounds = Number(values.rounds);
const entries = Number(values.entries);

/** What the bench needs of a ring, whichever checkout it comes from. */
interface Ring {
  get(key: string, prefix?: unknown): unknown;
  set(key: string, answer: { body: Buffer; etag: string } | null, prefix?: unknown): void;
}
interface RingModule {
  readonly AnswerRing: new (options: object) => Ring & { prefix?: (text: string, owner?: number) => unknown };
  readonly keyPrefix?: (text: string) => unknown;
}

/** A ring of the checkout's, bounded as the service's defaults, and how it makes a prefix (a method since the keyed hash; a function before). */
function ringOf(module: RingModule, owner: number): { ring: Ring; prefix: (text: string, owner?: number) => unknown } {
  const ring = new module.AnswerRing({
    maxBytes: 512 * 1024 * 1024, maxEntries: 200_000, ttlMs: 30_000, sizeOf: (bodyBytes: number) => (bodyBytes < 0 ? 512 : bodyBytes + 1_000),
  });
  const prefix = (text: string, forOwner = owner): unknown => (ring.prefix === undefined ? module.keyPrefix!(text) : ring.prefix(text, forOwner));
  return { ring, prefix };
}

const answer = { body: Buffer.alloc(5_263, 0x61), etag: '"bench-etag-0123456789abcdef"' };
const TOKEN_PREFIX = 'acme\u00001\u0000f0e1d2c3-b4a5-4678-9abc-def012345678\u0000s';

/** ns an operation of `work`, run `times` times. */
function timed(times: number, work: (i: number) => void): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < times; i += 1) work(i);
  return Number(process.hrtime.bigint() - started) / times;
}

type Figures = Record<string, number>;

function measure(module: RingModule, colliding: readonly string[], random: readonly string[]): Figures {
  const figures: Figures = {};
  {
    const { ring, prefix } = ringOf(module, 1);
    const p = prefix(TOKEN_PREFIX);
    const skus = Array.from({ length: 1_000 }, (_, i) => `SKU-${String(i).padStart(6, '0')}`);
    for (const sku of skus) ring.set(sku, answer, p);
    for (const sku of skus) ring.get(sku, p);
    figures.hit = timed(2_000_000, (i) => ring.get(skus[i % 1_000]!, p));
    figures.miss = timed(2_000_000, (i) => ring.get(`NO-${i % 100_000}`, p));
    const extra = random.map((sku) => `X${sku}`);
    figures.store = timed(extra.length, (i) => ring.set(extra[i]!, null, p));
  }
  for (const [name, skus] of [['random', random], ['made to collide', colliding]] as const) {
    const { ring, prefix } = ringOf(module, 1);
    const victim = prefix('acme\u0000s', 2);
    const held = Array.from({ length: 100 }, (_, i) => `ACME-${i}`);
    for (const sku of held) ring.set(sku, answer, victim);
    const flood = prefix('mallory\u0000s', 3);
    figures[`flood store, ${name}`] = timed(skus.length, (i) => ring.set(skus[i]!, null, flood));
    figures[`flood hit, ${name}`] = timed(skus.length, (i) => ring.get(skus[i]!, flood));
    figures[`other partner's hit after flood, ${name}`] = timed(1_000_000, (i) => ring.get(held[i % 100]!, victim));
  }
  return figures;
}

const here = (await import(pathToFileURL(resolve('src/adapters/cache/answer-ring.ts')).href)) as RingModule;
const baselineDir = values['baseline-dir'];
const baseline = baselineDir === undefined ? undefined : (await import(pathToFileURL(resolve(baselineDir, 'src/adapters/cache/answer-ring.ts')).href)) as RingModule;
const colliding = fnvCollidingSkus('mallory\u0000s', entries, 18);
const random = randomSkus(entries);

const runs: { here: Figures[]; baseline: Figures[] } = { here: [], baseline: [] };
for (let round = 0; round < rounds; round += 1) {
  runs.here.push(measure(here, colliding, random));
  if (baseline !== undefined) runs.baseline.push(measure(baseline, colliding, random));
  process.stderr.write(`round ${round + 1} of ${rounds} done\n`);
}

const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const medianOf = (figures: Figures[], row: string): number => median(figures.map((f) => f[row]!));
print(`AnswerRing, ns an operation, median of ${rounds} rounds; ${entries} entries in each flood${baseline === undefined ? '' : `; baseline ${baselineDir}`}`);
const rows = Object.keys(runs.here[0]!);
const header = baseline === undefined ? '| row | this checkout |' : '| row | this checkout | baseline | this / baseline |';
print(header);
print(baseline === undefined ? '|---|---|' : '|---|---|---|---|');
for (const row of rows) {
  const now = medianOf(runs.here, row);
  if (baseline === undefined) {
    print(`| ${row} | ${now.toFixed(1)} |`);
  } else {
    const before = medianOf(runs.baseline, row);
    print(`| ${row} | ${now.toFixed(1)} | ${before.toFixed(1)} | ${(now / before).toFixed(2)} |`);
  }
}
const floodFigures = (figures: Figures[]): string => (medianOf(figures, 'flood store, made to collide') / medianOf(figures, 'flood store, random')).toFixed(2);
print(`\nA colliding store against a random one: this checkout ${floodFigures(runs.here)}${baseline === undefined ? '' : `, baseline ${floodFigures(runs.baseline)}`}`);
