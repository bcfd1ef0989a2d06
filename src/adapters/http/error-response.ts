import type { Context } from 'koa';
import { setRateLimitHeaders } from './rate-limit-headers.js';
import { DomainError, RateLimitExceeded, type DomainErrorCode } from '../../domain/errors.js';

/** The one table from a domain error code to its HTTP status (spec section 7, decisions.md section 1). */
const STATUS_BY_CODE: Readonly<Record<DomainErrorCode, number>> = {
  invalid_sku: 400,
  invalid_product_id: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  sku_not_found: 404,
  product_not_found: 404,
  rate_limit_exceeded: 429,
};

/** Codes only the HTTP layer raises. */
export type HttpErrorCode = 'not_found' | 'method_not_allowed' | 'internal_error' | 'bad_request';

/** Writes the only error shape the service sends: `{ error, message }`, as JSON. */
export function sendError(ctx: Context, status: number, error: DomainErrorCode | HttpErrorCode, message: string): void {
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error, message };
}

/** Answers a thrown error; true if it was a domain error, false if it was unexpected. */
export function sendThrown(ctx: Context, thrown: unknown): boolean {
  if (thrown instanceof DomainError) {
    if (thrown instanceof RateLimitExceeded) {
      setRateLimitHeaders(ctx, thrown.status);
      ctx.set('Retry-After', String(thrown.status.resetSeconds));
    }
    if (thrown.code === 'missing_api_key' || thrown.code === 'invalid_api_key') ctx.set('WWW-Authenticate', 'Bearer');
    sendError(ctx, STATUS_BY_CODE[thrown.code], thrown.code, thrown.message);
    return true;
  }
  sendError(ctx, 500, 'internal_error', 'Unexpected server error; please retry later.');
  return false;
}
