import type { RateLimitStatus } from '../../domain/rate-limit.js';

/** The RateLimit-* headers every authenticated answer carries (docs/api.md, rate limit), as name/value pairs. */
export function rateLimitHeaders(status: RateLimitStatus): [readonly [string, string], readonly [string, string], readonly [string, string]] {
  return [
    ['RateLimit-Limit', String(status.limit)],
    ['RateLimit-Remaining', String(status.remaining)],
    ['RateLimit-Reset', String(status.resetSeconds)],
  ];
}
