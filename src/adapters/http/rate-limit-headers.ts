import { RATE_LIMIT_WINDOW_SECONDS, type RateLimitStatus } from '../../domain/rate-limit.js';
import type { HeaderList } from './answer.js';

/**
 * The rate-limit fields every authenticated answer carries (docs/api.md, rate limit): the three
 * `RateLimit-*` headers partners have read since the start, and the same numbers as the current
 * IETF draft's `RateLimit-Policy` and `RateLimit`, which today's client libraries read.
 */
export function rateLimitHeaders(status: RateLimitStatus): HeaderList {
  const headers = new Array<string>(RATE_LIMIT_HEADER_COUNT);
  putRateLimitHeaders(headers, 0, status);
  return headers;
}

/** How many entries (names and values) rateLimitHeaders makes. */
export const RATE_LIMIT_HEADER_COUNT = 10;

/** The same fields written into `headers` from `at` on, for a list made at its final length. */
export function putRateLimitHeaders(headers: string[], at: number, status: RateLimitStatus): void {
  const remaining = String(status.remaining);
  const reset = String(status.resetSeconds);
  headers[at] = 'RateLimit-Limit';
  headers[at + 1] = limitText(status.limit);
  headers[at + 2] = 'RateLimit-Remaining';
  headers[at + 3] = remaining;
  headers[at + 4] = 'RateLimit-Reset';
  headers[at + 5] = reset;
  headers[at + 6] = 'RateLimit-Policy';
  headers[at + 7] = policyText(status.limit);
  headers[at + 8] = 'RateLimit';
  headers[at + 9] = `"default";r=${remaining};t=${reset}`;
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
