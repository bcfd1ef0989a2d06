/**
 * The "last used" rows: how long an instance's minute of key uses takes to write
 * (MysqlApiKeyAdmin.saveLastUsed), for 5,000, 10,000, 20,000 and 100,000 keys used among 100,000
 * live keys, and 100,000 among 1,000,000; for 5,000 to 20,000, the single CASE statement written
 * before it as well (a copy below), which grew with the square of the keys. Keys used are a seeded
 * random pick of the table's; each run writes times later than every stored one, so every row
 * changes, as a real minute's do. Printed: median seconds of the call over alternating rounds, and
 * the statements it sent. A database of its own on BENCH_MARIADB_URL (default the machine's
 * MariaDB), dropped at the end. `npx tsx bench/last-used.ts [--rounds N]`.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { createConnection } from 'mysql2/promise';
import type { Database } from '../src/adapters/mysql/database.js';
import { migrateToLatest } from '../src/adapters/mysql/migrate.js';
import { LAST_USED_KEYS_PER_STATEMENT, MysqlApiKeyAdmin } from '../src/adapters/mysql/mysql-api-key-admin.js';
import { createMysqlDatabase } from '../src/adapters/mysql/mysql-database.js';
import { seededRandom } from '../test/support/seeded-random.js';
import { median } from './percentile.js';

/** The bench's MariaDB, as the other MySQL rows name it (targets-mysql.ts). */
const SERVER_URL = process.env.BENCH_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';

export const LAST_USED_ROW = 'last used, one minute of keys written';

/** Live keys in the table for the first rows: as many as the largest minute of them. */
const TABLE_KEYS = 100_000;
/** The last row's table: a service with ten times more keys than any minute uses. */
const LARGE_TABLE_KEYS = 1_000_000;
const USED_SIZES = [5_000, 10_000, 20_000, 100_000] as const;
/** The old statement at 100,000 keys would take minutes (it grows with the square). */
const OLD_SIZES = [5_000, 10_000, 20_000] as const;
const DEFAULT_ROUNDS = 3;
const PARTNER = 'bench-last-used';
/** Apart from the keys' creation, so every run's times are later than any stored. */
const FIRST_USE = Date.UTC(2026, 0, 5, 9, 0, 0);
const MINUTE_MS = 60_000;
const SEED = 20_260_105;

type Use = { readonly keyId: string; readonly at: Date };
type Way = 'old' | 'new';

export interface LastUsedOptions {
  /** Alternating rounds per row; the median is printed. */
  readonly rounds?: number;
}

const keyId = (n: number): string => `${PARTNER}-${String(n).padStart(7, '0')}`;
const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/** The single statement of before: a CASE of one arm per key, evaluated on each key's row. */
async function saveLastUsedOld(db: Kysely<Database>, uses: readonly Use[]): Promise<void> {
  if (uses.length === 0) return;
  const cases = sql.join(uses.map((use) => sql`when ${use.keyId} then ${use.at}`), sql` `);
  await db.updateTable('api_keys')
    .set({ last_used_at: sql<Date>`greatest(coalesce(last_used_at, '1970-01-01'), case id ${cases} end)` })
    .where('id', 'in', uses.map((use) => use.keyId))
    .execute();
}

/** Keys from..to, live, as an import of a large partner would leave them: in one INSERT ... SELECT of the SEQUENCE engine. */
async function insertKeys(db: Kysely<Database>, from: number, to: number): Promise<void> {
  await sql`insert into api_keys (id, partner_id, mode, sha256, label, origin, created_at)
    select concat(${PARTNER}, '-', lpad(seq, 7, '0')), ${PARTNER}, 'live', sha2(concat('pcat_live_bench_', seq), 256), null, 'cli', ${new Date(FIRST_USE - MINUTE_MS)}
    from ${sql.raw(`seq_${from}_to_${to}`)}`.execute(db);
}

/** `count` distinct keys of the first `tableKeys`, in random order, each used at its own millisecond of the minute. */
function minuteOfUses(random: () => number, tableKeys: number, count: number, minute: number): Use[] {
  const picked = new Set<number>();
  while (picked.size < count) picked.add(1 + Math.floor(random() * tableKeys));
  const start = FIRST_USE + minute * MINUTE_MS;
  return [...picked].map((n, i) => ({ keyId: keyId(n), at: new Date(start + (i % MINUTE_MS)) }));
}

interface Sample {
  readonly seconds: number;
  readonly statements: number;
}

interface Row {
  readonly used: number;
  readonly tableKeys: number;
  readonly way: Way;
  readonly samples: Sample[];
}

export async function runLastUsedRows(options: LastUsedOptions = {}): Promise<void> {
  const rounds = options.rounds ?? DEFAULT_ROUNDS;
  const name = `pcat_bench_last_used_${process.pid}`;
  const server = await createConnection({ uri: SERVER_URL, connectTimeout: 2_000 });
  await server.query(`create database \`${name}\` character set utf8mb4 collate utf8mb4_bin`);
  let statements = 0;
  const db = createMysqlDatabase(`${SERVER_URL.replace(/\/$/, '')}/${name}`, {
    queryTimeoutMs: 600_000,
    onStatement: (event) => {
      if (/^\s*update\s+[`]?api_keys/i.test(event.query.sql)) statements += 1;
    },
  });
  const admin = new MysqlApiKeyAdmin(db);
  const random = seededRandom(SEED);
  let minute = 0;
  const measure = async (way: Way, tableKeys: number, used: number): Promise<Sample> => {
    const uses = minuteOfUses(random, tableKeys, used, (minute += 1));
    const before = statements;
    const start = performance.now();
    if (way === 'new') await admin.saveLastUsed(uses);
    else await saveLastUsedOld(db, uses);
    const seconds = (performance.now() - start) / 1000;
    const written = await sql<{ n: number | string }>`select count(*) as n from api_keys where last_used_at >= ${new Date(FIRST_USE + minute * MINUTE_MS)}`.execute(db);
    if (Number(written.rows[0]!.n) !== used) throw new Error(`last used: ${way} wrote ${written.rows[0]!.n} of ${used} keys`);
    return { seconds, statements: statements - before };
  };
  try {
    await migrateToLatest(db);
    await db.insertInto('partners').values({ id: PARTNER, name: 'Last-used bench' }).execute();
    const seeded = performance.now();
    await insertKeys(db, 1, TABLE_KEYS);
    print(`last used: ${TABLE_KEYS.toLocaleString('en-US')} live keys inserted in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);
    const rows: Row[] = [
      ...USED_SIZES.map((used) => ({ used, tableKeys: TABLE_KEYS, way: 'new' as const, samples: [] })),
      ...OLD_SIZES.map((used) => ({ used, tableKeys: TABLE_KEYS, way: 'old' as const, samples: [] })),
    ];
    // A first write of every key, unmeasured, so each measured run updates rows that already hold a time.
    await admin.saveLastUsed(minuteOfUses(random, TABLE_KEYS, TABLE_KEYS, 0));
    for (let round = 0; round < rounds; round += 1) {
      // Alternating order, so drift on a shared machine weighs on both ways alike.
      for (const row of round % 2 === 0 ? rows : [...rows].reverse()) row.samples.push(await measure(row.way, row.tableKeys, row.used));
    }
    const grown = performance.now();
    await insertKeys(db, TABLE_KEYS + 1, LARGE_TABLE_KEYS);
    print(`last used: grown to ${LARGE_TABLE_KEYS.toLocaleString('en-US')} live keys in ${((performance.now() - grown) / 1000).toFixed(1)} s`);
    const large: Row = { used: 100_000, tableKeys: LARGE_TABLE_KEYS, way: 'new', samples: [] };
    for (let round = 0; round < rounds; round += 1) large.samples.push(await measure('new', LARGE_TABLE_KEYS, large.used));
    rows.push(large);
    printTable(rows, rounds);
  } finally {
    await db.destroy();
    await server.query(`drop database if exists \`${name}\``);
    await server.end();
  }
}

function printTable(rows: readonly Row[], rounds: number): void {
  print(`\n${LAST_USED_ROW}: saveLastUsed, median of ${rounds} rounds; new: JSON_TABLE joined by primary key, ${LAST_USED_KEYS_PER_STATEMENT.toLocaleString('en-US')} keys a statement; old: one CASE statement`);
  print('| keys used | keys in table | statement | seconds | statements |\n|---|---|---|---|---|');
  const sorted = [...rows].sort((a, b) => a.tableKeys - b.tableKeys || a.used - b.used || (a.way === 'old' ? -1 : 1));
  for (const row of sorted) {
    print(`| ${row.used.toLocaleString('en-US')} | ${row.tableKeys.toLocaleString('en-US')} | ${row.way} | ` +
      `${median(row.samples.map((s) => s.seconds)).toFixed(3)} | ${median(row.samples.map((s) => s.statements))} |`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: String(DEFAULT_ROUNDS) } } });
  await runLastUsedRows({ rounds: Number(values.rounds) });
}
