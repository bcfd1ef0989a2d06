import type { Principal } from '../../domain/api-key.js';
import { InvalidApiKey, RateLimitExceeded } from '../../domain/errors.js';
import type { RateLimitStatus } from '../../domain/rate-limit.js';
import type { ApiKeyStore } from './api-key-store.js';
import type { RateLimiter } from './rate-limiter.js';

/** Counts the request against its key's window; over the limit, refuses it. */
export class EnforceRateLimit {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly keys: ApiKeyStore,
  ) {}

  /** The window's status, for the response headers; throws RateLimitExceeded past the limit. */
  async execute(principal: Principal): Promise<RateLimitStatus> {
    const status = await this.limiter.consume(principal.keyId, principal.catalogId);
    // The count's round trip to a shared store also reads what changed elsewhere, and may have shown
    // a key revoked through another instance since the key was checked: the key is asked about
    // again before any answer, and a revoked key is refused as one (401 comes before 429).
    if (!(await this.keys.isStillActive(principal))) {
      throw new InvalidApiKey();
    }
    if (!status.allowed) throw new RateLimitExceeded(status);
    return status;
  }
}
