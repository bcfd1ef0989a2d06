import { AdminError } from '../../domain/admin-errors.js';
import { announce, newKey, type KeyIssue } from './issue-api-key.js';
import type { ApiKeyAdmin, KeyChangeAnnouncer } from './api-key-admin.js';
import type { Actor, AuditLog } from '../admin-sign-in/audit-log.js';
import type { Clock } from '../common/clock.js';

/**
 * Replaces a live key (the portal's "Replace"): a new key with the same label, and the old one
 * revoked, in one step. The audit log gets `key.replaced` for the old key and `key.created` for the new.
 */
export class ReplaceApiKey {
  constructor(
    private readonly keys: ApiKeyAdmin,
    private readonly announcer: KeyChangeAnnouncer,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  async execute(input: { partnerId: string; keyId: string; actor: Actor }): Promise<KeyIssue> {
    const { partnerId, keyId, actor } = input;
    const old = await this.keys.find(keyId);
    if (old === null || old.partnerId !== partnerId) throw new AdminError('key_not_found', `no API key with id ${JSON.stringify(keyId)}`);
    const notActive = new AdminError('key_not_active', `key ${keyId} is revoked: create a new key instead`);
    if (old.revokedAt !== null) throw notActive;
    const now = new Date(this.clock.now());
    // The new key reads what the old one did: a test key is replaced by a test key.
    const { key, record } = newKey(partnerId, old.mode, old.label, now);
    if (!(await this.keys.replace(keyId, record))) throw notActive;
    const adminEmail = actor?.adminEmail ?? null;
    await this.audit.record({ at: now, partnerId, adminEmail, action: 'key.replaced', keyId });
    await this.audit.record({ at: now, partnerId, adminEmail, action: 'key.created', keyId: record.id });
    const announceFailure = await announce(this.announcer, { withdrawn: [keyId], added: [record.id] });
    return { issued: { id: record.id, partner: partnerId, mode: old.mode, label: old.label, key, created_at: now }, announceFailure };
  }
}
