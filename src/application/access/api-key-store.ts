import type { Principal } from '../../domain/api-key.js';

/** Where issued keys are known, by their SHA-256 only. */
export interface ApiKeyStore {
  /** The key's owner if a key with this hash exists and is not revoked, else null. */
  findActiveByHash(sha256: string): Promise<Principal | null>;
  /**
   * Whether the key that authenticated this request is still live, given what the instance has
   * learned since (the request's round trip to the shared store may have shown a key change made elsewhere).
   */
  isStillActive(principal: Principal): Promise<boolean>;
}
