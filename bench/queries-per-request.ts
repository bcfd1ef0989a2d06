import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { drive, type DriveOptions, type Load } from './load.js';
import { madeUpKey } from './made-up-key.js';
import { pinned, withServer } from './server-process.js';
import { SERVER_URL } from './targets-mysql.js';
import type { BenchContext, Target } from './target.js';

/** Each reading of the counter is a statement itself: the later of two readings counts in their difference. */
const READING_STATEMENTS = 1;
/** The made-up keys the load rotates through, all well-formed and never issued. */
const MADE_UP_KEYS = 1_000;

interface Counted {
  readonly load: Load;
  readonly queries: number;
}

/**
 * Database statements per request, from MariaDB's own `Questions` counter read on a connection of
 * its own just before and just after one load run (after a 2 s warm-up) on a fresh server: for the
 * production settings and the MySQL row with the response cache on, with the table's load, then
 * the production settings under a flood of made-up keys from 127.0.0.1, with the failed-
 * authentication guard let open so that every one of them reaches the key check. The counter is
 * the server's: any other client of this MariaDB counts too.
 */
export async function printQueriesPerRequest(context: BenchContext, production: Target, cacheOn: Target | undefined, seconds: number): Promise<void> {
  const server = await createConnection({ uri: SERVER_URL, connectTimeout: 2_000 });
  const questions = async (): Promise<number> => {
    const [rows] = await server.query<RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Questions'");
    return Number(rows[0]!.Value);
  };
  const count = (env: Record<string, string>, load: BenchContext, options: DriveOptions = {}): Promise<Counted> =>
    withServer(context.serviceScript, env, async (base) => {
      await drive(context.generator, base, load, 2, pinned, options); // warm-up: JIT, held keys, caches
      const before = await questions();
      const measured = await drive(context.generator, base, load, seconds, pinned, options);
      return { load: measured, queries: (await questions()) - before - READING_STATEMENTS };
    });
  try {
    process.stdout.write(`\ndatabase queries per request (MariaDB's global Questions counter around one ${seconds}s run, less its own readings; every client of this MariaDB counts):\n`);
    const ofProduction = await count(production.env, context);
    process.stdout.write(`  ${production.name}: ${describe(ofProduction)} (target <= 0.01)\n`);
    if (cacheOn !== undefined) process.stdout.write(`  ${cacheOn.name}, for comparison: ${describe(await count(cacheOn.env, context))}\n`);

    const madeUp: BenchContext = { ...context, catalog: { ...context.catalog, keys: Array.from({ length: MADE_UP_KEYS }, madeUpKey) } };
    const flooded = await count({ ...production.env, AUTH_FAILURES_PER_MINUTE: '1000000000' }, madeUp, { countStatuses: true });
    const statuses = Object.entries(flooded.load.statuses ?? {}).map(([status, n]) => `${status}: ${n}`).join(', ') || 'none counted';
    process.stdout.write(`  ${production.name}, ${MADE_UP_KEYS} made-up well-formed keys from 127.0.0.1, AUTH_FAILURES_PER_MINUTE=1000000000: ` +
      `${describe(flooded)} (target 0); answers ${statuses}\n`);
  } finally {
    await server.end();
  }
}

const describe = ({ load, queries }: Counted): string =>
  `${(queries / load.requests).toFixed(4)} (${queries} queries / ${load.requests} requests, ${Math.round(load.rps)} req/s)`;
