import type { Kysely } from 'kysely';
import type { ApiKeyStore } from '../../application/access/api-key-store.js';
import { principalOf, type Principal } from '../../domain/api-key.js';
import type { Database } from './database.js';
import { prepareQuery } from './prepared-query.js';

/** One read on the unique, binary-collated hash index per call; nothing cached here. */
export class MysqlApiKeyStore implements ApiKeyStore {
  private readonly activeByHash;
  private readonly activeById;
  private readonly live;

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
    this.live = () => db.selectFrom('api_keys').select(['id', 'partner_id', 'mode', 'sha256']).where('revoked_at', 'is', null).execute();
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

  /** Every live key, for an instance that holds them all in memory. */
  async listLive(): Promise<Array<Principal & { sha256: string }>> {
    return (await this.live()).map((row) => ({ ...principalOf(row.id, row.partner_id, row.mode), sha256: row.sha256 }));
  }
}
