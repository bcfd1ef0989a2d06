import type { Kysely } from 'kysely';
import type { ApiKeyStore } from '../../application/ports/api-key-store.js';
import type { Principal } from '../../domain/api-key.js';
import type { Database } from './database.js';

/** One read on the unique, binary-collated hash index; never cached, so a revocation counts at once. */
export class MysqlApiKeyStore implements ApiKeyStore {
  constructor(private readonly db: Kysely<Database>) {}

  async findActiveByHash(sha256: string): Promise<Principal | null> {
    const row = await this.db
      .selectFrom('api_keys')
      .select(['id', 'partner_id'])
      .where('sha256', '=', sha256)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row === undefined ? null : { keyId: row.id, partnerId: row.partner_id };
  }
}
