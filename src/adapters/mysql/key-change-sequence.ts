import { sql, type Kysely } from 'kysely';
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
