import { Type, type Static } from 'typebox';
import type { RateLimitStatus } from './rate-limit.js';

/** What kind of failure a code is; the HTTP adapter answers each kind with one status. */
export type ErrorKind = 'invalid_input' | 'unauthenticated' | 'not_found' | 'gone' | 'too_many_requests' | 'unavailable';

/**
 * Every stable, machine-readable code the domain and use cases can raise, declared once with its
 * kind: the API's status table, the OpenAPI document's enums and the client's union follow from it.
 */
export const DOMAIN_ERROR_KINDS = {
  invalid_sku: 'invalid_input',
  invalid_product_id: 'invalid_input',
  invalid_cursor: 'invalid_input',
  invalid_limit: 'invalid_input',
  invalid_query: 'invalid_input',
  invalid_batch: 'invalid_input',
  missing_api_key: 'unauthenticated',
  invalid_api_key: 'unauthenticated',
  sku_not_found: 'not_found',
  product_not_found: 'not_found',
  cursor_expired: 'gone',
  rate_limit_exceeded: 'too_many_requests',
  service_unavailable: 'unavailable',
} as const satisfies Record<string, ErrorKind>;

export type DomainErrorCode = keyof typeof DOMAIN_ERROR_KINDS;

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
