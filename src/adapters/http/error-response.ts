import { TIMEOUTS } from '../timeouts.js';
import { isStorageUnavailable } from '../../application/common/storage-unavailable.js';
import {
  DOMAIN_ERROR_KINDS, DomainError, RateLimitExceeded, ServiceUnavailable, TooManyFailedAuthentications, type DomainErrorCode, type ErrorBody, type ErrorKind,
} from '../../domain/errors.js';
import { jsonAnswer, type Answer, type HeaderList } from './answer.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

/** The one table from a kind of domain failure to its HTTP status (docs/api.md, errors). */
const STATUS_BY_KIND: Readonly<Record<ErrorKind, number>> = {
  invalid_input: 400,
  unauthenticated: 401,
  not_found: 404,
  gone: 410,
  too_many_requests: 429,
  unavailable: 503,
};

/** Codes only the HTTP layer raises, with their status. */
const HTTP_ERROR_STATUS = {
  not_found: 404,
  method_not_allowed: 405,
  internal_error: 500,
  bad_request: 400,
  request_timeout: 408,
} as const;

export type HttpErrorCode = keyof typeof HTTP_ERROR_STATUS;
export type ApiErrorCode = DomainErrorCode | HttpErrorCode;

/** The status of every code the API sends, domain and HTTP alike: the client's union is generated from its keys. */
export const STATUS_BY_CODE: Readonly<Record<ApiErrorCode, number>> = {
  ...Object.fromEntries(Object.entries(DOMAIN_ERROR_KINDS).map(([code, kind]) => [code, STATUS_BY_KIND[kind]])) as Record<DomainErrorCode, number>,
  ...HTTP_ERROR_STATUS,
};

/** The answer to a thrown error, and how it is to be sent. */
export interface ErrorAnswer {
  readonly answer: Answer;
  /** False for an unexpected error, which the caller logs. */
  readonly expected: boolean;
  /** How long to hold the answer back before sending it (0: at once). */
  readonly delayMs: number;
}

/** Errors are never cached. */
export const ERROR_CACHE_CONTROL = 'no-store';

/** The only error shape the service sends: `{ error, message }`, never cached. */
export function errorAnswer(code: ApiErrorCode, message: string, headers: HeaderList = []): Answer {
  return jsonAnswer(STATUS_BY_CODE[code], JSON.stringify({ error: code, message } satisfies ErrorBody), [...headers, 'Cache-Control', ERROR_CACHE_CONTROL]);
}

/** The answer to a thrown error: its status, body and headers. */
export function errorAnswerFor(thrown: unknown): ErrorAnswer {
  // Storage that cannot be reached is a moment's unavailability, not a fault: 503 with a time to retry.
  if (isStorageUnavailable(thrown)) return { ...errorAnswerFor(new ServiceUnavailable(TIMEOUTS.storageRetryAfterSeconds)), expected: false };
  if (!(thrown instanceof DomainError)) {
    return { answer: errorAnswer('internal_error', 'Unexpected server error; please retry later.'), expected: false, delayMs: 0 };
  }
  const headers: string[] = [];
  if (thrown instanceof RateLimitExceeded) {
    headers.push(...rateLimitHeaders(thrown.status), 'Retry-After', String(thrown.status.resetSeconds));
  }
  const heldBack = thrown instanceof TooManyFailedAuthentications;
  if (heldBack || thrown instanceof ServiceUnavailable) headers.push('Retry-After', String(thrown.retryAfterSeconds));
  if (thrown.code === 'missing_api_key' || thrown.code === 'invalid_api_key') headers.push('WWW-Authenticate', 'Bearer');
  return {
    answer: errorAnswer(thrown.code, thrown.message, headers),
    expected: true,
    delayMs: heldBack ? TIMEOUTS.heldBackAnswerDelayMs : 0,
  };
}
