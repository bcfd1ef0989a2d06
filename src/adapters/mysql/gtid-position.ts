import { sql, type Kysely } from 'kysely';
import type { Database } from './database.js';

/**
 * Replication positions as the two servers write them. MariaDB's `@@gtid_binlog_pos` is one GTID a
 * replication domain, `domain-server-sequence`, separated by commas; MySQL's `@@global.gtid_executed`
 * is a GTID set, `uuid:first-last[:first-last]...` a source, separated by commas. A position is kept
 * as the server wrote it, with its whitespace removed, so the wait statement can take it as it is.
 */
const MARIADB_GTID = /^(\d+)-(\d+)-(\d+)$/;
const MYSQL_SOURCE = /^([0-9a-fA-F-]{36})((?::\d+(?:-\d+)?)+)$/;

/** Whether each database handle is on MariaDB, asked once: the two name the position differently. */
const onMariadb = new WeakMap<Kysely<Database>, boolean>();

/** The primary's position now: everything committed on it so far. */
export async function primaryPosition(db: Kysely<Database>): Promise<string> {
  let mariadb = onMariadb.get(db);
  if (mariadb === undefined) {
    const { rows: [server] } = await sql<{ version: string }>`select version() as version`.execute(db);
    mariadb = /mariadb/i.test(server?.version ?? '');
    onMariadb.set(db, mariadb);
  }
  const statement = mariadb
    ? sql<{ position: string | null }>`select @@gtid_binlog_pos as position`
    : sql<{ position: string | null }>`select @@global.gtid_executed as position`;
  const { rows: [row] } = await statement.execute(db);
  return (row?.position ?? '').replace(/\s+/g, '');
}

/**
 * The position that covers both: per MariaDB domain the later sequence number, per MySQL source
 * the union of the ranges. An empty position covers nothing, and is covered by any.
 */
export function mergePositions(a: string, b: string): string {
  if (a === '' || a === b) return b;
  if (b === '') return a;
  return isMysqlPosition(a) || isMysqlPosition(b) ? mergeMysqlSets(a, b) : mergeMariadbPositions(a, b);
}

/** The statement that waits, on a replica, until it has applied `position` or `seconds` have passed; its one column is `reached`. */
export function waitForPosition(position: string, seconds: number): { readonly sql: string; readonly parameters: unknown[] } {
  return isMysqlPosition(position)
    ? { sql: 'select wait_for_executed_gtid_set(?, ?) = 0 as reached', parameters: [position, seconds] }
    : { sql: 'select master_gtid_wait(?, ?) = 0 as reached', parameters: [position, seconds] };
}

/** Longer than any position a primary with a few hundred replication sources writes. */
const MAX_POSITION_LENGTH = 16_384;

/** A position is well formed if either server could have written it. */
export function isPosition(text: string): boolean {
  if (text.length > MAX_POSITION_LENGTH) return false;
  return text === '' || text.split(',').every((part) => MARIADB_GTID.test(part) || MYSQL_SOURCE.test(part));
}

function isMysqlPosition(position: string): boolean {
  return position.includes(':');
}

function mergeMariadbPositions(a: string, b: string): string {
  const byDomain = new Map<string, { server: string; sequence: bigint }>();
  for (const gtid of `${a},${b}`.split(',')) {
    const [, domain, server, sequence] = MARIADB_GTID.exec(gtid) ?? [];
    if (domain === undefined || server === undefined || sequence === undefined) continue;
    const known = byDomain.get(domain);
    if (known === undefined || BigInt(sequence) > known.sequence) byDomain.set(domain, { server, sequence: BigInt(sequence) });
  }
  return [...byDomain].map(([domain, { server, sequence }]) => `${domain}-${server}-${sequence}`).join(',');
}

function mergeMysqlSets(a: string, b: string): string {
  const bySource = new Map<string, Array<[bigint, bigint]>>();
  for (const part of `${a},${b}`.split(',')) {
    const [, source, ranges] = MYSQL_SOURCE.exec(part) ?? [];
    if (source === undefined || ranges === undefined) continue;
    const list = bySource.get(source.toLowerCase()) ?? [];
    for (const range of ranges.slice(1).split(':')) {
      const [first, last = first] = range.split('-');
      list.push([BigInt(first!), BigInt(last!)]);
    }
    bySource.set(source.toLowerCase(), list);
  }
  return [...bySource].map(([source, ranges]) => `${source}${unionOf(ranges).map(([first, last]) => (first === last ? `:${first}` : `:${first}-${last}`)).join('')}`).join(',');
}

/** Ranges joined where they overlap or touch, in order. */
function unionOf(ranges: Array<[bigint, bigint]>): Array<[bigint, bigint]> {
  const sorted = [...ranges].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  const joined: Array<[bigint, bigint]> = [];
  for (const [first, last] of sorted) {
    const previous = joined.at(-1);
    if (previous !== undefined && first <= previous[1] + 1n) previous[1] = last > previous[1] ? last : previous[1];
    else joined.push([first, last]);
  }
  return joined;
}
