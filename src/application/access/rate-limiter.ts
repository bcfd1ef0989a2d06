import type { RateLimitStatus } from '../../domain/rate-limit.js';

/** Counts requests per key in fixed windows (docs/decisions.md, rate limit). */
export interface RateLimiter {
  /**
   * Counts one request for the key and says whether it is within the limit. `catalogId` is the
   * catalog the key reads: where the count is one round trip to a store shared by several
   * instances, that round trip also reads what changed in it.
   */
  consume(keyId: string, catalogId?: string): Promise<RateLimitStatus>;
  /**
   * Whether this instance can show the key has room now, from its own counts of it: the last answer
   * in the key's current window left more than its counts still in flight; nothing is counted. A key
   * it has not counted in the window has none it can show. A limiter whose count is a round trip
   * says so, and a request's own reading may then start while its count is under way; one without
   * (counting in memory) leaves it out.
   */
  leavesRoom?(keyId: string): boolean;
}
