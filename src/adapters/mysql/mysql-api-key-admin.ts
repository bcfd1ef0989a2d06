import { sql, type Kysely } from 'kysely';
import type { ApiKeyAdmin, ApiKeyRecord, NewApiKey } from '../../application/keys/api-key-admin.js';
import type { KeyMode } from '../../domain/api-key.js';
import type { Database } from './database.js';
import { prepareOnServer } from './bounded-pool.js';
import { isSandboxCatalog } from '../../domain/sandbox.js';
import { changingKeys } from './key-change-sequence.js';

const COLUMNS = ['id', 'partner_id', 'mode', 'label', 'created_at', 'revoked_at', 'last_used_at'] as const;

interface KeyRow {
  id: string;
  partner_id: string;
  mode: KeyMode;
  label: string | null;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

function record(row: KeyRow): ApiKeyRecord {
  return { id: row.id, partnerId: row.partner_id, mode: row.mode, label: row.label, createdAt: row.created_at, revokedAt: row.revoked_at, lastUsedAt: row.last_used_at };
}

/** Keys issued, revoked and listed in MySQL; only hashes are written. Keys issued here are `origin = 'cli'`: an import leaves them alone. */
export class MysqlApiKeyAdmin implements ApiKeyAdmin {
  constructor(private readonly db: Kysely<Database>) {}

  async partnerExists(partnerId: string): Promise<boolean> {
    // A sandbox has a partner row of its own, but no keys or admins of its own: its partner's test keys read it.
    if (isSandboxCatalog(partnerId)) return false;
    return (await this.db.selectFrom('partners').select('id').where('id', '=', partnerId).executeTakeFirst()) !== undefined;
  }

  async insert(key: NewApiKey): Promise<void> {
    await changingKeys(this.db, (trx, change) => insertKey(trx, key, change));
  }

  async find(keyId: string): Promise<ApiKeyRecord | null> {
    const row = await this.db.selectFrom('api_keys').select(COLUMNS).where('id', '=', keyId).executeTakeFirst();
    return row === undefined ? null : record(row);
  }

  async list(partnerId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db.selectFrom('api_keys').select(COLUMNS).where('partner_id', '=', partnerId).orderBy('created_at').orderBy('id').execute();
    return rows.map(record);
  }

  revoke(keyId: string, at: Date): Promise<Date | null> {
    // A key revoked already keeps its time; the number taken is then left unused (numbers may skip).
    return changingKeys(this.db, async (trx, change) => {
      await trx.updateTable('api_keys').set({ revoked_at: at, changed_seq: change }).where('id', '=', keyId).where('revoked_at', 'is', null).execute();
      const row = await trx.selectFrom('api_keys').select('revoked_at').where('id', '=', keyId).executeTakeFirst();
      return row?.revoked_at ?? null;
    });
  }

  replace(keyId: string, replacement: NewApiKey): Promise<boolean> {
    return changingKeys(this.db, async (trx, change) => {
      const revoked = await trx.updateTable('api_keys').set({ revoked_at: replacement.createdAt, changed_seq: change })
        .where('id', '=', keyId).where('partner_id', '=', replacement.partnerId).where('revoked_at', 'is', null).executeTakeFirst();
      if (revoked.numUpdatedRows !== 1n) return false;
      await insertKey(trx, replacement, change);
      return true;
    });
  }

  async saveLastUsed(uses: readonly { readonly keyId: string; readonly at: Date }[]): Promise<void> {
    // A key named twice would join its row twice, and MariaDB updates a row once: its latest time only.
    const latest = new Map<string, number>();
    for (const use of uses) {
      const seen = latest.get(use.keyId);
      if (seen === undefined || seen < use.at.getTime()) latest.set(use.keyId, use.at.getTime());
    }
    // In id order, so every instance locks the rows it shares with another in the same order: no deadlock.
    const sorted = [...latest].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    // Each chunk a statement, and a transaction, of its own: its row locks last one chunk's time.
    for (let at = 0; at < sorted.length; at += LAST_USED_KEYS_PER_STATEMENT) {
      const pairs = sorted.slice(at, at + LAST_USED_KEYS_PER_STATEMENT).map(([keyId, ms]) => [keyId, datetimeText(new Date(ms))]);
      const statement = lastUsedStatement(JSON.stringify(pairs)).compile(this.db);
      // One parameter whatever the chunk: prepared once per connection, the JSON travels unescaped.
      prepareOnServer(statement.sql);
      await this.db.executeQuery(statement);
    }
  }
}

/**
 * Keys per "last used" statement: each costs a primary-key lookup, and 5,000 took 0.11 to 0.15 s
 * (bench/last-used.ts), several times inside the serving pool's 1 s deadline for one statement.
 */
export const LAST_USED_KEYS_PER_STATEMENT = 5_000;

/**
 * One UPDATE joining the keys by primary key to the (id, time) pairs of a JSON array: linear in the
 * pairs, where a CASE of one arm per key evaluated on each key's row was quadratic. The id column is
 * wider than api_keys.id (255), so an over-long unknown id is compared whole, never cut to a key's
 * id, and is binary like it, whatever the database's default collation, so the join uses the primary
 * key. greatest() keeps a later time written by another instance; an unknown id joins no row.
 */
function lastUsedStatement(pairs: string) {
  return sql`update api_keys k
    join json_table(${pairs}, '$[*]' columns (
      id varchar(1024) character set utf8mb4 collate utf8mb4_bin path '$[0]',
      at datetime(3) path '$[1]'
    )) u on k.id = u.id
    set k.last_used_at = greatest(coalesce(k.last_used_at, '1970-01-01'), u.at)`;
}

/** A time as datetime(3) text in UTC, the zone every time is stored in. */
function datetimeText(at: Date): string {
  return at.toISOString().slice(0, 23).replace('T', ' ');
}

async function insertKey(db: Kysely<Database>, key: NewApiKey, change: number): Promise<void> {
  await db.insertInto('api_keys').values({
    id: key.id, partner_id: key.partnerId, mode: key.mode, sha256: key.sha256, label: key.label, origin: 'cli', created_at: key.createdAt, revoked_at: null, changed_seq: change,
  }).execute();
}
