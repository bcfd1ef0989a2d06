import type { Principal } from '../domain/api-key.js';
import { RateLimitExceeded } from '../domain/errors.js';
import type { RateLimitStatus } from '../domain/rate-limit.js';
import type { RateLimiter } from './ports/rate-limiter.js';

/** Counts the request against its key's window; over the limit, refuses it. */
export class EnforceRateLimit {
  constructor(private readonly limiter: RateLimiter) {}

  /** The window's status, for the response headers; throws RateLimitExceeded past the limit. */
  async execute(principal: Principal): Promise<RateLimitStatus> {
    const status = await this.limiter.consume(principal.keyId);
    if (!status.allowed) throw new RateLimitExceeded(status);
    return status;
  }
}
