import type { ApiKeyStore } from '../../src/application/access/api-key-store.js';
import { principalOf, type KeyMode, type Principal } from '../../src/domain/api-key.js';
import type { Catalog } from '../../src/domain/catalog.js';

interface StoredKey extends Principal {
  revoked: boolean;
}

/** Keys by SHA-256, as listed in a validated catalog, plus keys added by a test: for tests that need them without an import. */
export class MemoryApiKeyStore implements ApiKeyStore {
  private readonly byHash = new Map<string, StoredKey>();
  private readonly byKeyId = new Map<string, StoredKey>();

  constructor(catalog: Catalog) {
    for (const partner of catalog.partners) {
      for (const key of partner.apiKeys) {
        this.add({ keyId: key.id, partnerId: partner.id, mode: key.mode, sha256: key.sha256, revoked: key.revoked });
      }
    }
  }

  add(key: { keyId: string; partnerId: string; mode?: KeyMode; sha256: string; revoked?: boolean }): void {
    const stored = { ...principalOf(key.keyId, key.partnerId, key.mode ?? 'live'), revoked: key.revoked ?? false };
    this.byHash.set(key.sha256, stored);
    this.byKeyId.set(key.keyId, stored);
  }

  /** Revokes the key with this id; true if there was one. Takes effect on the next request. */
  revoke(keyId: string): boolean {
    let found = false;
    for (const key of this.byHash.values()) {
      if (key.keyId === keyId) {
        key.revoked = true;
        found = true;
      }
    }
    return found;
  }

  findActiveByHash(sha256: string): Promise<Principal | null> {
    const key = this.byHash.get(sha256);
    return Promise.resolve(key === undefined || key.revoked ? null : principalOf(key.keyId, key.partnerId, key.mode));
  }

  isStillActive(principal: Principal): Promise<boolean> {
    const key = this.byKeyId.get(principal.keyId);
    return Promise.resolve(key !== undefined && key.catalogId === principal.catalogId && !key.revoked);
  }
}
