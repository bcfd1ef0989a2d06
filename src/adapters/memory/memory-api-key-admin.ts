import type { ApiKeyAdmin, ApiKeyRecord, NewApiKey } from '../../application/keys/api-key-admin.js';
import type { MemoryCatalogStore } from './memory-catalog-store.js';

interface KeyDetails {
  readonly label: string | null;
  readonly createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/**
 * Issues and revokes keys in the memory store, at once for every request of this process. The
 * store knows keys by hash only; their labels and times are kept here. A catalog file's keys
 * carry no times: they count as created when this adapter was, at the service's start.
 */
export class MemoryApiKeyAdmin implements ApiKeyAdmin {
  private readonly details = new Map<string, KeyDetails>();
  private readonly startedAt: Date;

  constructor(
    private readonly store: MemoryCatalogStore,
    now: Date = new Date(),
  ) {
    this.startedAt = now;
  }

  partnerExists(partnerId: string): Promise<boolean> {
    return Promise.resolve(this.store.hasPartner(partnerId));
  }

  insert(key: NewApiKey): Promise<void> {
    if (this.store.apiKey(key.id) !== undefined) return Promise.reject(new Error(`key id ${key.id} is taken`));
    this.store.addKey({ keyId: key.id, partnerId: key.partnerId, mode: key.mode, sha256: key.sha256 });
    this.details.set(key.id, { label: key.label, createdAt: key.createdAt, revokedAt: null, lastUsedAt: null });
    return Promise.resolve();
  }

  find(keyId: string): Promise<ApiKeyRecord | null> {
    return Promise.resolve(this.record(keyId));
  }

  list(partnerId: string): Promise<ApiKeyRecord[]> {
    const records = this.store.apiKeysOf(partnerId).flatMap((key) => this.record(key.id) ?? []);
    return Promise.resolve(records.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1)));
  }

  revoke(keyId: string, at: Date): Promise<Date | null> {
    const record = this.record(keyId);
    if (record === null) return Promise.resolve(null);
    if (record.revokedAt !== null) return Promise.resolve(record.revokedAt);
    this.store.revokeKey(keyId);
    this.detailsOf(keyId).revokedAt = at;
    return Promise.resolve(at);
  }

  async replace(keyId: string, replacement: NewApiKey): Promise<boolean> {
    // One synchronous step: nothing runs between the check, the revocation and the insert.
    const record = this.record(keyId);
    if (record === null || record.revokedAt !== null || record.partnerId !== replacement.partnerId) return false;
    this.store.revokeKey(keyId);
    this.detailsOf(keyId).revokedAt = replacement.createdAt;
    await this.insert(replacement);
    return true;
  }

  saveLastUsed(uses: readonly { readonly keyId: string; readonly at: Date }[]): Promise<void> {
    for (const { keyId, at } of uses) {
      if (this.store.apiKey(keyId) === undefined) continue;
      const details = this.detailsOf(keyId);
      if (details.lastUsedAt === null || details.lastUsedAt < at) details.lastUsedAt = at;
    }
    return Promise.resolve();
  }

  private record(keyId: string): ApiKeyRecord | null {
    const key = this.store.apiKey(keyId);
    if (key === undefined) return null;
    const details = this.details.get(keyId);
    return {
      id: key.id,
      partnerId: key.partnerId,
      mode: key.mode,
      label: details?.label ?? null,
      createdAt: details?.createdAt ?? this.startedAt,
      // A key the catalog file lists as revoked has no time of its own either.
      revokedAt: details?.revokedAt ?? (key.revoked ? this.startedAt : null),
      lastUsedAt: details?.lastUsedAt ?? null,
    };
  }

  private detailsOf(keyId: string): KeyDetails {
    let details = this.details.get(keyId);
    if (details === undefined) {
      details = { label: null, createdAt: this.startedAt, revokedAt: null, lastUsedAt: null };
      this.details.set(keyId, details);
    }
    return details;
  }
}
