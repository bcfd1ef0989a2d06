import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './database.js';

/**
 * The next key-change number, taken inside the transaction that changes the keys and stamped on
 * each row it writes (`changed_seq`). Taking it locks the counter's row until that transaction ends:
 * changes get their numbers in the order they commit, so a reader that has applied every change up
 * to N and reads `changed_seq > N` never passes over one that commits later with a smaller number.
 */
export async function nextKeyChange(trx: Kysely<Database>): Promise<number> {
  const result = await sql`update key_change_sequence set seq = last_insert_id(seq + 1) where id = 1`.execute(trx);
  if (result.insertId === undefined || result.numAffectedRows !== 1n) throw new Error('key_change_sequence has no row: run the migrations (`cli migrate`)');
  return Number(result.insertId);
}

/** The number of the last key change committed: a whole read of the keys started after this holds every change up to it. */
export async function lastKeyChange(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('key_change_sequence').select('seq').where('id', '=', 1).executeTakeFirst();
  if (row === undefined) throw new Error('key_change_sequence has no row: run the migrations (`cli migrate`)');
  return row.seq;
}

/**
 * Runs `work` in a transaction that has taken the next key-change number. If the work fails, its own
 * error is thrown: a rollback that fails after it (its connection closed by that very error, as a
 * server that refuses writes closes it) must not hide why.
 */
export async function changingKeys<T>(db: Kysely<Database>, work: (trx: Transaction<Database>, change: number) => Promise<T>): Promise<T> {
  const failed: unknown[] = [];
  try {
    return await db.transaction().execute(async (trx) => {
      try {
        return await work(trx, await nextKeyChange(trx));
      } catch (error) {
        failed.push(error);
        throw error;
      }
    });
  } catch (error) {
    throw failed.length > 0 ? failed[0] : error;
  }
}
