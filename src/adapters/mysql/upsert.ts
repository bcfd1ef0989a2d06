import { sql, type Insertable, type InsertQueryBuilder, type InsertResult, type Transaction } from 'kysely';
import { batches } from './batches.js';
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
    await trx.insertInto(table).values(batch).onDuplicateKeyUpdate(update).execute();
  }
}

/** Deletes rows by id, in batches that keep each statement small. */
export async function deleteByIds(trx: Transaction<Database>, table: 'products' | 'videos' | 'pdp_entries', ids: readonly number[]): Promise<void> {
  for (const batch of batches(ids, () => 1, 5_000)) {
    await trx.deleteFrom(table).where('id', 'in', batch).execute();
  }
}
