import { AdminError } from '../../domain/admin-errors.js';
import type { ApiKeyAdmin, ApiKeyRecord } from './api-key-admin.js';

/** Where uses seen on this instance but not written yet can be read. */
export interface UnwrittenKeyUsage {
  unwritten(keyId: string): Date | null;
}

const NONE: UnwrittenKeyUsage = { unwritten: () => null };

/** A partner's keys, oldest first (`keys list`, the portal's key table): never a key, never a hash. */
export class ListApiKeys {
  constructor(
    private readonly keys: ApiKeyAdmin,
    private readonly usage: UnwrittenKeyUsage = NONE,
  ) {}

  async execute(input: { partnerId: string }): Promise<ApiKeyRecord[]> {
    const { partnerId } = input;
    if (!(await this.keys.partnerExists(partnerId))) {
      throw new AdminError('partner_not_found', `no partner with id ${JSON.stringify(partnerId)}; import its catalog first`);
    }
    return (await this.keys.list(partnerId)).map((key) => {
      const seen = this.usage.unwritten(key.id);
      return seen !== null && (key.lastUsedAt === null || seen > key.lastUsedAt) ? { ...key, lastUsedAt: seen } : key;
    });
  }
}
