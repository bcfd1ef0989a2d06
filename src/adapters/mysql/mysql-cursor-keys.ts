import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { systemClock, type Clock } from '../../application/common/clock.js';
import type { CursorKeys } from '../../application/changes/cursor-keys.js';
import type { CursorKey } from '../../domain/changes.js';
import type { Database } from './database.js';

/** Runs a read where it should go: on a replica that can take it, else on the primary. */
export type ReadWhere = <T>(use: (db: Kysely<Database>) => Promise<T>) => Promise<T>;

/** The row of `service_secrets` that holds the cursor key. */
export const CURSOR_SECRET_NAME = 'changes_cursor';
const SECRET_BYTES = 32;

/**
 * The deployment's cursor key, kept in the database so every instance signs with the same one
 * and nothing needs configuring. The first instance to ask writes it; one racing it keeps the
 * row it finds, so all agree. The row's `created_at` is when the deployment began signing, even
 * when `CURSOR_SECRET` (`secret`) signs in its place; the partners served unsigned before are those
 * migration 0012 marked. Read once a process, when first needed, so a database down at start delays
 * the key and never the start; a failed read is tried again. With `read`, the key is read where it
 * sends the read (a replica), and written on the primary only when it is not there: nothing is
 * written through a replica.
 */
export class MysqlCursorKeys implements CursorKeys {
  private key: Promise<CursorKey> | undefined;
  private had: CursorKey | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: { secret?: string | null; clock?: Clock; read?: ReadWhere } = {},
  ) {}

  cursorKey(): CursorKey | Promise<CursorKey> {
    if (this.had !== undefined) return this.had;
    this.key ??= this.readOrCreate().then((key) => {
      this.had = key;
      return key;
    }, (error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return this.key;
  }

  private async readOrCreate(): Promise<CursorKey> {
    const read = this.options.read ?? ((use) => use(this.db));
    let row = await read((db) => secretRow(db).executeTakeFirst());
    if (row === undefined) {
      const now = new Date((this.options.clock ?? systemClock).now());
      await this.db.insertInto('service_secrets')
        .ignore()
        .values({ name: CURSOR_SECRET_NAME, value: randomBytes(SECRET_BYTES).toString('base64url'), created_at: now })
        .execute();
      row = await secretRow(this.db).executeTakeFirstOrThrow();
    }
    const unsigned = await read((db) => db.selectFrom('partners').select('id').where('feed_before_signing', '=', 1).execute());
    const configured = this.options.secret ?? null;
    return {
      secret: configured === null ? Buffer.from(row.value, 'base64url') : Buffer.from(configured, 'utf8'),
      signingSince: row.created_at,
      unsignedIssuedTo: new Set(unsigned.map(({ id }) => id)),
    };
  }
}

function secretRow(db: Kysely<Database>) {
  return db.selectFrom('service_secrets').select(['value', 'created_at']).where('name', '=', CURSOR_SECRET_NAME);
}
