import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ApiKeyListing, IssuedApiKey } from '../../application/ports/operator-store.js';
import { generateApiKey, hashApiKey } from '../../domain/api-key.js';
import type { Database } from './database.js';

async function requirePartner(db: Kysely<Database>, partnerId: string): Promise<void> {
  const partner = await db.selectFrom('partners').select('id').where('id', '=', partnerId).executeTakeFirst();
  if (partner === undefined) throw new Error(`no partner with id ${JSON.stringify(partnerId)}; import its catalog first`);
}

/** Creates a key for the partner and stores only its SHA-256. */
export async function issueApiKey(db: Kysely<Database>, partnerId: string, label: string | null, now = new Date()): Promise<IssuedApiKey> {
  await requirePartner(db, partnerId);
  const key = generateApiKey();
  // The id is random, not derived from the key, so listing ids reveals nothing of any key.
  const id = `${partnerId}-${randomBytes(6).toString('hex')}`;
  await db.insertInto('api_keys').values({ id, partner_id: partnerId, sha256: hashApiKey(key), label, origin: 'cli', created_at: now, revoked_at: null }).execute();
  return { id, partner: partnerId, label, key, created_at: now };
}

/** Revokes a key from the next request on; revoking a revoked key keeps its first revocation time. */
export async function revokeApiKey(db: Kysely<Database>, keyId: string, now = new Date()): Promise<{ id: string; revoked_at: Date }> {
  await db.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', keyId).where('revoked_at', 'is', null).execute();
  const row = await db.selectFrom('api_keys').select(['id', 'revoked_at']).where('id', '=', keyId).executeTakeFirst();
  if (row?.revoked_at == null) throw new Error(`no API key with id ${JSON.stringify(keyId)}`);
  return { id: row.id, revoked_at: row.revoked_at };
}

/** The partner's keys, oldest first: never a key, never a hash. */
export async function listApiKeys(db: Kysely<Database>, partnerId: string): Promise<ApiKeyListing[]> {
  await requirePartner(db, partnerId);
  return db.selectFrom('api_keys')
    .select(['id', 'label', 'created_at', 'revoked_at'])
    .where('partner_id', '=', partnerId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
