import { sql, type Kysely } from 'kysely';
import type { ApiKeyAdmin, ApiKeyRecord, NewApiKey } from '../../application/keys/api-key-admin.js';
import type { KeyMode } from '../../domain/api-key.js';
import type { Database } from './database.js';
import { isSandboxCatalog } from '../../domain/sandbox.js';
import { nextKeyChange } from './key-change-sequence.js';

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
    await this.db.transaction().execute(async (trx) => insertKey(trx, key, await nextKeyChange(trx)));
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
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('api_keys').select('revoked_at').where('id', '=', keyId).forUpdate().executeTakeFirst();
      if (row === undefined || row.revoked_at !== null) return row?.revoked_at ?? null;
      await trx.updateTable('api_keys').set({ revoked_at: at, changed_seq: await nextKeyChange(trx) }).where('id', '=', keyId).execute();
      return at;
    });
  }

  replace(keyId: string, replacement: NewApiKey): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const change = await nextKeyChange(trx);
      const revoked = await trx.updateTable('api_keys').set({ revoked_at: replacement.createdAt, changed_seq: change })
        .where('id', '=', keyId).where('partner_id', '=', replacement.partnerId).where('revoked_at', 'is', null).executeTakeFirst();
      if (revoked.numUpdatedRows !== 1n) return false;
      await insertKey(trx, replacement, change);
      return true;
    });
  }

  async saveLastUsed(uses: readonly { readonly keyId: string; readonly at: Date }[]): Promise<void> {
    if (uses.length === 0) return;
    // One statement for the batch; greatest() keeps a later time written by another instance.
    const cases = sql.join(uses.map((use) => sql`when ${use.keyId} then ${use.at}`), sql` `);
    await this.db.updateTable('api_keys')
      .set({ last_used_at: sql<Date>`greatest(coalesce(last_used_at, '1970-01-01'), case id ${cases} end)` })
      .where('id', 'in', uses.map((use) => use.keyId))
      .execute();
  }
}

async function insertKey(db: Kysely<Database>, key: NewApiKey, change: number): Promise<void> {
  await db.insertInto('api_keys').values({
    id: key.id, partner_id: key.partnerId, mode: key.mode, sha256: key.sha256, label: key.label, origin: 'cli', created_at: key.createdAt, revoked_at: null, changed_seq: change,
  }).execute();
}
