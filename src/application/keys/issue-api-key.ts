import { generateApiKey, hashApiKey, type KeyMode } from '../../domain/api-key.js';
import { AdminError } from '../../domain/admin-errors.js';
import { MAX_KEY_LABEL_LENGTH, randomHex } from '../../domain/admin.js';
import type { ApiKeyAdmin, KeyChangeAnnouncer, NewApiKey } from './api-key-admin.js';
import type { KeyChanges } from '../instances/change-versions.js';
import type { Actor, AuditLog } from '../admin-sign-in/audit-log.js';
import type { Clock } from '../common/clock.js';
import type { IssuedApiKey } from '../catalog-import/operator-commands.js';
import { reasonOf } from '../../domain/failure-reason.js';

/** What issuing or replacing a key gives: the key, once, and why the other instances may not know of it yet. */
export interface KeyIssue {
  readonly issued: IssuedApiKey;
  /** Null when every instance was told; else the reason, and the key may be refused elsewhere for up to CACHE_TTL_MS. */
  readonly announceFailure: string | null;
}

/** A new key for the partner: the key itself in the answer, only its hash stored. */
export function newKey(partnerId: string, mode: KeyMode, label: string | null, now: Date): { key: string; record: NewApiKey } {
  if (label !== null && label.length > MAX_KEY_LABEL_LENGTH) {
    throw new AdminError('invalid_label', `A label is at most ${MAX_KEY_LABEL_LENGTH} characters.`);
  }
  const key = generateApiKey(mode);
  // The id is random, not derived from the key, so listing ids reveals nothing of any key; a test key's says so.
  const id = mode === 'live' ? `${partnerId}-${randomHex(6)}` : `${partnerId}-test-${randomHex(6)}`;
  return { key, record: { id, partnerId, mode, sha256: hashApiKey(key), label, createdAt: now } };
}

/** Tells the instances; a failure is reported, not thrown, since the write has committed. */
export async function announce(announcer: KeyChangeAnnouncer, changes: KeyChanges): Promise<string | null> {
  try {
    await announcer.keysChanged(changes);
    return null;
  } catch (error) {
    return reasonOf(error);
  }
}

/** Issues a key (`keys issue`, the portal's "Create key"): usable on every instance from the next request. */
export class IssueApiKey {
  constructor(
    private readonly keys: ApiKeyAdmin,
    private readonly announcer: KeyChangeAnnouncer,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  async execute(input: { partnerId: string; mode: KeyMode; label: string | null; actor: Actor }): Promise<KeyIssue> {
    const { partnerId, mode, label, actor } = input;
    if (!(await this.keys.partnerExists(partnerId))) {
      throw new AdminError('partner_not_found', `no partner with id ${JSON.stringify(partnerId)}; import its catalog first`);
    }
    const now = new Date(this.clock.now());
    const { key, record } = newKey(partnerId, mode, label, now);
    await this.keys.insert(record);
    await this.audit.record({ at: now, partnerId, adminEmail: actor?.adminEmail ?? null, action: 'key.created', keyId: record.id });
    const announceFailure = await announce(this.announcer, { withdrawn: [], added: [record.id] });
    return { issued: { id: record.id, partner: partnerId, mode, label, key, created_at: now }, announceFailure };
  }
}
