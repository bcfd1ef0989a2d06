import { AdminError } from '../../domain/admin-errors.js';
import { announce } from './issue-api-key.js';
import { NotAnnouncedError } from '../instances/not-announced.js';
import type { ApiKeyAdmin, KeyChangeAnnouncer } from './api-key-admin.js';
import type { Actor, AuditLog } from '../admin-sign-in/audit-log.js';
import type { Clock } from '../common/clock.js';

/**
 * Revokes a key (`keys revoke`, the portal's "Revoke"): refused on every instance from the next
 * request. An admin may revoke only its own partner's keys: another partner's key is "not found",
 * as a missing one is. Revoking a revoked key keeps its first revocation time.
 */
export class RevokeApiKey {
  constructor(
    private readonly keys: ApiKeyAdmin,
    private readonly announcer: KeyChangeAnnouncer,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** `partnerId` null: an operator, who may revoke any key. */
  async execute(input: { partnerId: string | null; keyId: string; actor: Actor }): Promise<{ id: string; revoked_at: Date }> {
    const { partnerId, keyId, actor } = input;
    const key = await this.keys.find(keyId);
    if (key === null || (partnerId !== null && key.partnerId !== partnerId)) {
      throw new AdminError('key_not_found', `no API key with id ${JSON.stringify(keyId)}`);
    }
    const now = new Date(this.clock.now());
    const revokedAt = await this.keys.revoke(keyId, now);
    if (revokedAt === null) throw new AdminError('key_not_found', `no API key with id ${JSON.stringify(keyId)}`);
    if (key.revokedAt === null) {
      await this.audit.record({ at: now, partnerId: key.partnerId, adminEmail: actor?.adminEmail ?? null, action: 'key.revoked', keyId });
    }
    // Told again even for a key revoked before: an announcement that failed then is made good now.
    const failure = await announce(this.announcer, { withdrawn: [keyId], added: [] });
    if (failure !== null) throw new NotAnnouncedError(`the revocation of key ${keyId}`, { id: keyId, revoked_at: revokedAt }, failure);
    return { id: keyId, revoked_at: revokedAt };
  }
}
