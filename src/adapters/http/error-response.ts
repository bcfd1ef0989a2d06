import { setTimeout } from 'node:timers/promises';
import type { Context } from 'koa';
import { TIMEOUTS } from '../../application/timeouts.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { isStorageUnavailable } from '../../application/ports/storage-unavailable.js';
import { DomainError, RateLimitExceeded, ServiceUnavailable, TooManyFailedAuthentications, type DomainErrorCode, type ErrorBody } from '../../domain/errors.js';

/** The one table from a domain error code to its HTTP status (docs/api.md, errors). */
const STATUS_BY_CODE: Readonly<Record<DomainErrorCode, number>> = {
  invalid_sku: 400,
  invalid_product_id: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  sku_not_found: 404,
  product_not_found: 404,
  rate_limit_exceeded: 429,
  invalid_cursor: 400,
  invalid_limit: 400,
  cursor_expired: 410,
  service_unavailable: 503,
};

/** Codes only the HTTP layer raises. */
export type HttpErrorCode = 'not_found' | 'method_not_allowed' | 'internal_error' | 'bad_request';

/** An error answer, framework-free: both the Koa app and the lookup fast path write it. */
export interface ErrorAnswer {
  readonly status: number;
  /** Headers besides Cache-Control and Content-Type, as name/value pairs. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Readonly<ErrorBody & { error: DomainErrorCode | HttpErrorCode }>;
  /** False for an unexpected error, which the caller logs. */
  readonly expected: boolean;
  /** How long to hold the answer back before sending it (0: at once). */
  readonly delayMs: number;
}

/** Errors are never cached. */
export const ERROR_CACHE_CONTROL = 'no-store';

/** The answer to a thrown error: its status, body and headers. */
export function errorAnswerFor(thrown: unknown): ErrorAnswer {
  // Storage that cannot be reached is a moment's unavailability, not a fault: 503 with a time to retry.
  if (isStorageUnavailable(thrown)) return { ...errorAnswerFor(new ServiceUnavailable(TIMEOUTS.storageRetryAfterSeconds)), expected: false };
  if (!(thrown instanceof DomainError)) {
    return { status: 500, headers: [], body: { error: 'internal_error', message: 'Unexpected server error; please retry later.' }, expected: false, delayMs: 0 };
  }
  const headers: (readonly [string, string])[] = [];
  if (thrown instanceof RateLimitExceeded) {
    headers.push(...rateLimitHeaders(thrown.status), ['Retry-After', String(thrown.status.resetSeconds)]);
  }
  const heldBack = thrown instanceof TooManyFailedAuthentications;
  if (heldBack || thrown instanceof ServiceUnavailable) headers.push(['Retry-After', String(thrown.retryAfterSeconds)]);
  if (thrown.code === 'missing_api_key' || thrown.code === 'invalid_api_key') headers.push(['WWW-Authenticate', 'Bearer']);
  return {
    status: STATUS_BY_CODE[thrown.code],
    headers,
    body: { error: thrown.code, message: thrown.message },
    expected: true,
    delayMs: heldBack ? TIMEOUTS.heldBackAnswerDelayMs : 0,
  };
}

/** Writes the only error shape the service sends: `{ error, message }`, as JSON. */
export function sendError(ctx: Context, status: number, error: DomainErrorCode | HttpErrorCode, message: string): void {
  ctx.status = status;
  ctx.set('Cache-Control', ERROR_CACHE_CONTROL);
  ctx.body = { error, message } satisfies ErrorBody;
}

/** Answers a thrown error (after its delay, if any); true if it was a domain error, false if it was unexpected. */
export async function sendThrown(ctx: Context, thrown: unknown): Promise<boolean> {
  const answer = errorAnswerFor(thrown);
  if (answer.delayMs > 0) await setTimeout(answer.delayMs);
  for (const [name, value] of answer.headers) ctx.set(name, value);
  sendError(ctx, answer.status, answer.body.error, answer.body.message);
  return answer.expected;
}
