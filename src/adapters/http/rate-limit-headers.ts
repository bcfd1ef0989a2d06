import type { Context } from 'koa';
import type { RateLimitStatus } from '../../domain/rate-limit.js';

/** The RateLimit-* headers every authenticated answer carries (spec section 8). */
export function setRateLimitHeaders(ctx: Context, status: RateLimitStatus): void {
  ctx.set('RateLimit-Limit', String(status.limit));
  ctx.set('RateLimit-Remaining', String(status.remaining));
  ctx.set('RateLimit-Reset', String(status.resetSeconds));
}
