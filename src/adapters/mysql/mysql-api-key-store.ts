import { sql, type Kysely } from 'kysely';
import type { ApiKeyStore } from '../../application/access/api-key-store.js';
import type { ChangedKeyRow, KeyChangesRead, LiveKeyRow } from '../../application/access/key-set-source.js';
import { principalOf, type KeyMode, type Principal } from '../../domain/api-key.js';
import type { Database } from './database.js';
import { lastKeyChange } from './key-change-sequence.js';
import { prepareQuery } from './prepared-query.js';

/**
 * Keys per page of a whole read or a read of changes: each page is one short statement (tens of
 * milliseconds for 10,000 rows), well inside the serving deadline, whatever the number of keys.
 */
export const KEY_PAGE = 10_000;

interface ChangedRow {
  readonly id: string;
  readonly partner_id: string;
  readonly mode: KeyMode;
  readonly sha256: string;
  readonly revoked_at: Date | null;
  readonly changed_seq: number;
}

/** One read on the unique, binary-collated hash index per call; nothing cached here. */
export class MysqlApiKeyStore implements ApiKeyStore {
  private readonly activeByHash;
  private readonly activeById;
  private readonly livePage;
  private readonly changedAfter;
  private readonly changedWithin;
  private readonly lastChange;

  constructor(db: Kysely<Database>) {
    this.activeByHash = prepareQuery(
      db,
      (sha256: string) => db.selectFrom('api_keys').select(['id', 'partner_id', 'mode']).where('sha256', '=', sha256).where('revoked_at', 'is', null),
      ['<sha256>'],
      // The hash is a bound value, never part of the SQL text a server or its logs see.
      { onServer: true },
    );
    this.activeById = prepareQuery(
      db,
      (id: string) => db.selectFrom('api_keys').select(['id', 'partner_id', 'mode']).where('id', '=', id).where('revoked_at', 'is', null),
      ['<id>'],
    );
    this.livePage = prepareQuery(
      db,
      (afterId: string) => db.selectFrom('api_keys').select(['id', 'partner_id', 'mode', 'sha256']).where('id', '>', afterId).where('revoked_at', 'is', null).orderBy('id').limit(sql.lit(KEY_PAGE)),
      ['<after id>'],
    );
    // Rows changed after a change, in change order; the rows of one change (an import's may be many) paged by id.
    this.changedAfter = prepareQuery(
      db,
      (after: number) => db.selectFrom('api_keys').select(['id', 'partner_id', 'mode', 'sha256', 'revoked_at', 'changed_seq'])
        .where('changed_seq', '>', after).orderBy('changed_seq').orderBy('id').limit(sql.lit(KEY_PAGE)),
      [-1],
    );
    this.changedWithin = prepareQuery(
      db,
      (change: number, afterId: string) => db.selectFrom('api_keys').select(['id', 'partner_id', 'mode', 'sha256', 'revoked_at', 'changed_seq'])
        .where('changed_seq', '=', change).where('id', '>', afterId).orderBy('id').limit(sql.lit(KEY_PAGE)),
      [-1, '<after id>'],
    );
    this.lastChange = () => lastKeyChange(db);
  }

  async findActiveByHash(sha256: string): Promise<Principal | null> {
    const [row] = await this.activeByHash(sha256);
    return row === undefined ? null : principalOf(row.id, row.partner_id, row.mode);
  }

  /** Read from the database on this very request: nothing newer can have been learned since. */
  isStillActive(): Promise<boolean> {
    return Promise.resolve(true);
  }

  /** Whether the key is live now, read by its id. */
  async isLive(principal: Principal): Promise<boolean> {
    const [row] = await this.activeById(principal.keyId);
    return row !== undefined && row.partner_id === principal.partnerId && row.mode === principal.mode;
  }

  /**
   * Every live key, a page at a time, for an instance that holds them all in memory. The counter is
   * read first: each page, read after it on the same server, holds every change up to it.
   */
  async readLiveKeys(open: () => (page: readonly LiveKeyRow[]) => void): Promise<number> {
    const take = open();
    const through = await this.lastChange();
    for (let after = ''; ;) {
      const rows = await this.livePage(after);
      take(rows.map((row) => ({ keyId: row.id, partnerId: row.partner_id, mode: row.mode, sha256: row.sha256 })));
      if (rows.length < KEY_PAGE) return through;
      after = rows[rows.length - 1]!.id;
    }
  }

  /**
   * Every key changed after the change `after`. The counter is read first: the rows, read after it on
   * the same server, hold every change up to it, and the set may be taken as up to date to there.
   */
  async keysChangedAfter(after: number): Promise<KeyChangesRead> {
    const through = await this.lastChange();
    const rows: ChangedKeyRow[] = [];
    // A page ends inside a change or after it: the rest of that change is read by id, then the changes after it.
    for (let change = after, afterId: string | null = null; ;) {
      const page: readonly ChangedRow[] = afterId === null ? await this.changedAfter(change) : await this.changedWithin(change, afterId);
      for (const row of page) rows.push({ keyId: row.id, partnerId: row.partner_id, mode: row.mode, sha256: row.sha256, live: row.revoked_at === null });
      if (page.length === KEY_PAGE) {
        const last: ChangedRow = page[page.length - 1]!;
        change = last.changed_seq;
        afterId = last.id;
      } else if (afterId === null) {
        return { rows, through: Math.max(after, through) };
      } else {
        afterId = null;
      }
    }
  }
}
