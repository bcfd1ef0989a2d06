import type { RateLimitStatus } from '../../domain/rate-limit.js';

/** Counts requests per key in fixed windows (decisions.md section 3). */
export interface RateLimiter {
  /** Counts one request for the key and says whether it is within the limit. */
  consume(keyId: string): Promise<RateLimitStatus>;
}
