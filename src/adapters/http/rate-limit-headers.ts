import { RATE_LIMIT_WINDOW_SECONDS, type RateLimitStatus } from '../../domain/rate-limit.js';
import type { HeaderList } from './answer.js';

/**
 * The rate-limit fields every authenticated answer carries (docs/api.md, rate limit): the three
 * `RateLimit-*` headers partners have read since the start, and the same numbers as the current
 * IETF draft's `RateLimit-Policy` and `RateLimit`, which today's client libraries read.
 */
export function rateLimitHeaders(status: RateLimitStatus): HeaderList {
  return [
    'RateLimit-Limit', limitText(status.limit),
    'RateLimit-Remaining', String(status.remaining),
    'RateLimit-Reset', String(status.resetSeconds),
    'RateLimit-Policy', policyText(status.limit),
    'RateLimit', `"default";r=${status.remaining};t=${status.resetSeconds}`,
  ];
}

// The limit is the same for every key of a deployment: its two texts are made once, not per answer.
let lastLimit = Number.NaN;
let lastLimitText = '';
let lastPolicyText = '';

function remember(limit: number): void {
  if (limit === lastLimit) return;
  lastLimit = limit;
  lastLimitText = String(limit);
  lastPolicyText = `"default";q=${limit};w=${RATE_LIMIT_WINDOW_SECONDS}`;
}

function limitText(limit: number): string {
  remember(limit);
  return lastLimitText;
}

function policyText(limit: number): string {
  remember(limit);
  return lastPolicyText;
}
