import type { Kysely } from 'kysely';
import type { ApiKeyStore } from '../../application/ports/api-key-store.js';
import type { Principal } from '../../domain/api-key.js';
import type { Database } from './database.js';
import { prepareQuery } from './prepared-query.js';

/** One read on the unique, binary-collated hash index; never cached, so a revocation counts at once. */
export class MysqlApiKeyStore implements ApiKeyStore {
  private readonly activeByHash;

  constructor(db: Kysely<Database>) {
    this.activeByHash = prepareQuery(
      db,
      (sha256: string) => db.selectFrom('api_keys').select(['id', 'partner_id']).where('sha256', '=', sha256).where('revoked_at', 'is', null),
      ['<sha256>'],
      // The hash is a bound value, never part of the SQL text a server or its logs see.
      { onServer: true },
    );
  }

  async findActiveByHash(sha256: string): Promise<Principal | null> {
    const [row] = await this.activeByHash(sha256);
    return row === undefined ? null : { keyId: row.id, partnerId: row.partner_id };
  }
}
