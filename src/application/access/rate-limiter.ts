import type { RateLimitStatus } from '../../domain/rate-limit.js';

/** Counts requests per key in fixed windows (docs/decisions.md, rate limit). */
export interface RateLimiter {
  /**
   * Counts one request for the key and says whether it is within the limit. `partnerId` is the
   * key's owner: where the count is one round trip to a store shared by several instances, that
   * round trip also reads what changed in the partner's catalog.
   */
  consume(keyId: string, partnerId?: string): Promise<RateLimitStatus>;
}
