import { join } from 'node:path';
import { outputOf } from './child-output.js';
import { ATTACKER_ADDRESS, LEGIT_ADDRESS } from './client-addresses.js';
import { drive, LOAD_CONNECTIONS, type Load } from './load.js';
import { median } from './percentile.js';
import { freePort, onLoadCore, pinned, startServer, waitUntilUp } from './server-process.js';
import type { BenchContext } from './target.js';

/** The flood starts this long before the legitimate load is measured and ends this long after. */
const LEAD_S = 1;

interface FloodCounts {
  readonly statuses: Record<string, number>;
  /** Requests that failed or went unanswered for 5 s. */
  readonly failures: number;
  /** Connections lost before the end (closed by the server, refused, timed out) and opened again. */
  readonly reopened: number;
  readonly elapsedS: number;
}

interface Round {
  readonly quiet: Load;
  readonly flooded: Load;
  readonly flood: FloodCounts;
}

function runFlood(port: number, path: string, connections: number, seconds: number): Promise<FloodCounts> {
  const client = [process.execPath, '--import', 'tsx', join(import.meta.dirname, 'flood-client.ts'), '127.0.0.1', String(port), path, String(connections), String(seconds), ATTACKER_ADDRESS];
  return outputOf(onLoadCore(client), { killAfterMs: (seconds + 30) * 1000 }).then((out) => JSON.parse(out) as FloodCounts);
}

export interface FloodOptions {
  readonly seconds: number;
  readonly rounds: number;
  /** The flood's keep-alive connections, each asking again the moment it is answered. */
  readonly connections: number;
}

/**
 * One legitimate key's throughput and latency (the table's load generator, all requests with that
 * key, from 127.0.0.1), quiet and during a flood of made-up keys from 127.0.0.2, round by round in
 * alternating order on one server; then the ratio of the two, the median of the rounds'.
 */
export async function measureFlood(setting: string, env: Record<string, string>, context: BenchContext, { seconds, rounds, connections }: FloodOptions): Promise<void> {
  const legit: BenchContext = { ...context, catalog: { ...context.catalog, keys: context.catalog.keys.slice(0, 1) } };
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = await startServer(context.serviceScript, { ...env, PORT: String(port) });
  process.stdout.write(`\nmade-up-key flood, ${setting}: one valid key from ${LEGIT_ADDRESS} (${context.generator}, ${LOAD_CONNECTIONS} connections) ` +
    `quiet and during a flood from ${ATTACKER_ADDRESS} (${connections} keep-alive connections, a new random pcat_live_ key per request), ${rounds} rounds x ${seconds}s\n`);
  try {
    await waitUntilUp(`${base}/healthz`);
    await drive(context.generator, base, legit, 2, pinned); // warm-up: JIT, caches
    const results: Round[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const measureQuiet = (): Promise<Load> => drive(context.generator, base, legit, seconds, pinned);
      const measureFlooded = async (): Promise<{ flooded: Load; flood: FloodCounts }> => {
        const flood = runFlood(port, `/api/v1/public/sku/${context.catalog.skus[0]!}`, connections, seconds + 2 * LEAD_S);
        await new Promise((r) => setTimeout(r, LEAD_S * 1000));
        const flooded = await drive(context.generator, base, legit, seconds, pinned);
        return { flooded, flood: await flood };
      };
      // Alternate the order so drift on a shared machine does not favour one side.
      const quietFirst = round % 2 === 0 ? await measureQuiet() : undefined;
      const flooded = await measureFlooded();
      const quiet = quietFirst ?? (await measureQuiet());
      const result = { quiet, ...flooded };
      results.push(result);
      process.stdout.write(`  round ${round + 1}: quiet ${describe(quiet)}; flooded ${describe(result.flooded)}; ratio ${(result.flooded.rps / quiet.rps).toFixed(2)}; ` +
        `flood ${Math.round(answered(result.flood) / result.flood.elapsedS)} answers/s\n`);
    }
    printFlood(setting, results);
  } finally {
    child.kill('SIGKILL');
  }
}

const describe = (load: Load): string => `${Math.round(load.rps)} req/s, p50 ${load.p50Ms.toFixed(2)} ms, p99 ${load.p99Ms.toFixed(2)} ms${load.errors > 0 ? `, ${load.errors} errors` : ''}`;
const answered = (flood: FloodCounts): number => Object.values(flood.statuses).reduce((a, b) => a + b, 0);

function printFlood(setting: string, results: Round[]): void {
  const row = (label: string, loads: Load[]): string =>
    `| ${label} | ${Math.round(median(loads.map((l) => l.rps)))} | ${median(loads.map((l) => l.p50Ms)).toFixed(2)} | ${median(loads.map((l) => l.p99Ms)).toFixed(2)} | ${loads.reduce((n, l) => n + l.errors, 0)} |\n`;
  process.stdout.write('\n| legitimate key | req/s (median) | p50 ms | p99 ms | errors (all rounds) |\n|---|---|---|---|---|\n');
  process.stdout.write(row('quiet', results.map((r) => r.quiet)));
  process.stdout.write(row('during the flood', results.map((r) => r.flooded)));
  const ratio = (of: (load: Load) => number): string => median(results.map((r) => of(r.flooded) / of(r.quiet))).toFixed(2);
  const statuses: Record<string, number> = {};
  for (const { flood } of results) for (const [status, n] of Object.entries(flood.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
  const total = results.reduce((n, r) => n + answered(r.flood), 0);
  const seconds = results.reduce((s, r) => s + r.flood.elapsedS, 0);
  const failures = results.reduce((n, r) => n + r.flood.failures, 0);
  const reopened = results.reduce((n, r) => n + r.flood.reopened, 0);
  process.stdout.write(`\n${setting}: legitimate throughput during the flood / quiet: ${ratio((l) => l.rps)} (median of rounds; target >= 0.50 on memory storage); ` +
    `latency during / quiet: p50 ${ratio((l) => l.p50Ms)}, p99 ${ratio((l) => l.p99Ms)}\n`);
  process.stdout.write(`flood: ${Math.round(total / seconds)} answers/s; ${Object.entries(statuses).map(([s, n]) => `${s}: ${n}`).join(', ') || 'no answers'}; ` +
    `${failures} requests failed or unanswered in 5 s; ${reopened} connections lost and opened again\n`);
}
