import type { RateLimitStatus } from '../../domain/rate-limit.js';

/** Counts requests per key in fixed windows (docs/decisions.md, rate limit). */
export interface RateLimiter {
  /**
   * Counts one request for the key and says whether it is within the limit. `partnerId` is the
   * key's owner: a limiter shared by several instances also reads what changed in that partner's
   * catalog, in the same step.
   */
  consume(keyId: string, partnerId?: string): Promise<RateLimitStatus>;
}
