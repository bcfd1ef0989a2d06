import type { RateLimitStatus } from '../../domain/rate-limit.js';

/** Counts requests per key in fixed windows (docs/decisions.md, rate limit). */
export interface RateLimiter {
  /**
   * Counts one request for the key and says whether it is within the limit. `partnerId` is the
   * key's owner: where the count is one round trip to a store shared by several instances, that
   * round trip also reads what changed in the partner's catalog.
   */
  consume(keyId: string, partnerId?: string): Promise<RateLimitStatus>;
  /**
   * Whether this instance's own view of the key, from its last count, leaves it room now; nothing is
   * counted. A limiter whose count is a round trip says so, and a request's own reading may then
   * start while its count is under way; one without (counting in memory) leaves it out.
   */
  leavesRoom?(keyId: string): boolean;
}
