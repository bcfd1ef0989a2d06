import { Type, type Static } from 'typebox';
import type { RateLimitStatus } from './rate-limit.js';

/** Stable, machine-readable codes of the failures the domain and use cases can raise. */
export type DomainErrorCode =
  | 'invalid_sku'
  | 'invalid_product_id'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'sku_not_found'
  | 'product_not_found'
  | 'rate_limit_exceeded'
  | 'invalid_cursor'
  | 'invalid_limit'
  | 'cursor_expired'
  | 'service_unavailable';

/** The body of every error answer (docs/api.md, errors); the OpenAPI document's `Error` is this declaration. */
export const ErrorBodySchema = Type.Object({
  error: Type.String({ description: 'Machine-readable code.' }),
  message: Type.String({ minLength: 1, description: 'Human-readable text.' }),
}, { additionalProperties: false });

export type ErrorBody = Static<typeof ErrorBodySchema>;

/** A failure the caller caused or may act on; carries a stable code and no transport detail. */
export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** The key has used up its window; `status` feeds the RateLimit-* and Retry-After headers. */
export class RateLimitExceeded extends DomainError {
  constructor(readonly status: RateLimitStatus) {
    const seconds = status.resetSeconds;
    super('rate_limit_exceeded', `Rate limit exceeded: retry in ${seconds} second${seconds === 1 ? '' : 's'}.`);
    this.name = 'RateLimitExceeded';
  }
}

/**
 * Too many failed authentications from the caller's address: the request is refused before its key
 * is looked up, so a flood of made-up keys costs no storage read. Answered like a rate limit.
 */
export class TooManyFailedAuthentications extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    const seconds = retryAfterSeconds;
    super('rate_limit_exceeded', `Too many failed authentications from your address: retry in ${seconds} second${seconds === 1 ? '' : 's'}.`);
    this.name = 'TooManyFailedAuthentications';
  }
}

/** The key is unknown, revoked or malformed: one answer for all three, so none is told apart. */
export class InvalidApiKey extends DomainError {
  constructor() {
    super('invalid_api_key', 'The API key is not valid or has been revoked.');
    this.name = 'InvalidApiKey';
  }
}

/**
 * The instance cannot answer this request now: its storage cannot be reached and what it holds
 * does not decide the request (a key issued while the database is away, say). Never for a key it
 * can decide. The caller retries after `retryAfterSeconds`.
 */
export class ServiceUnavailable extends DomainError {
  constructor(readonly retryAfterSeconds: number, what = 'The service cannot reach its storage') {
    super('service_unavailable', `${what}; retry in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}.`);
    this.name = 'ServiceUnavailable';
  }
}
