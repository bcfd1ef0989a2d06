import { sql, type Insertable, type InsertQueryBuilder, type InsertResult, type Transaction } from 'kysely';
import { batches } from './batches.js';
import { prepareOnServer } from './bounded-pool.js';
import type { Database } from './database.js';

type UpsertTable = 'partners' | 'api_keys' | 'products' | 'product_lookups' | 'videos' | 'pdp_entries' | 'product_tombstones';
type UpdateFromInserted<T extends UpsertTable> = Parameters<InsertQueryBuilder<Database, T, InsertResult>['onDuplicateKeyUpdate']>[0];

/** Rough bytes a row adds to an INSERT statement, to keep each batch well under max_allowed_packet. */
function approximateSize(row: object): number {
  let size = 16;
  for (const value of Object.values(row)) size += typeof value === 'string' ? value.length * 2 + 4 : 16;
  return size;
}

/**
 * Rows per statement, largest first. Each statement is a server-side prepared statement, so its
 * values travel in binary and are never escaped into SQL text: an import's answers come to
 * megabytes a batch, whose escaping and joining into one text took a fifth of an import's CPU and
 * whose parsing a third of the server's (docs/performance-history.md). A batch is cut into these
 * sizes, so a table has a handful of statement texts, each prepared once per connection, whatever
 * its rows.
 */
const ROWS_PER_STATEMENT = [512, 256, 128, 64, 32, 16, 8, 4, 2, 1];

/**
 * Multi-row `INSERT ... ON DUPLICATE KEY UPDATE` in batches: a row whose unique key exists
 * keeps its id and takes the new values of `columns`.
 */
export async function upsertRows<T extends UpsertTable>(
  trx: Transaction<Database>,
  table: T,
  rows: readonly Insertable<Database[T]>[],
  columns: readonly (keyof Database[T] & string)[],
): Promise<void> {
  const update = Object.fromEntries(columns.map((column) => [column, sql`values(${sql.ref(column)})`])) as UpdateFromInserted<T>;
  for (const batch of batches(rows, approximateSize)) {
    for (let at = 0; at < batch.length;) {
      const count = ROWS_PER_STATEMENT.find((size) => size <= batch.length - at)!;
      const statement = trx.insertInto(table).values(batch.slice(at, at + count)).onDuplicateKeyUpdate(update).compile();
      prepareOnServer(statement.sql);
      await trx.executeQuery(statement);
      at += count;
    }
  }
}

/** Deletes rows by id, in batches that keep each statement small. */
export async function deleteByIds(trx: Transaction<Database>, table: 'products' | 'videos' | 'pdp_entries', ids: readonly number[]): Promise<void> {
  for (const batch of batches(ids, () => 1, 5_000)) {
    await trx.deleteFrom(table).where('id', 'in', batch).execute();
  }
}
