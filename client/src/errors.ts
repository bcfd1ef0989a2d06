import { API_ERROR_STATUS, type ApiErrorCode } from './generated/error-codes.js';

/** Every `error` code the API sends, plus `unexpected_response` for an answer that is not the API's error shape. */
export type ErrorCode = ApiErrorCode | 'unexpected_response';

const KNOWN_CODES: ReadonlySet<string> = new Set(Object.keys(API_ERROR_STATUS));

export interface PartnerCatalogErrorDetails {
  readonly status: number;
  readonly code: ErrorCode;
  readonly message: string;
  /** Seconds the server asked to wait (429, 503). */
  readonly retryAfter?: number | undefined;
  /** The server's `X-Request-Id`, for support requests. */
  readonly requestId?: string | undefined;
}

/** A non-2xx answer of the API, with its `error` code. */
export class PartnerCatalogError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly retryAfter: number | undefined;
  readonly requestId: string | undefined;

  constructor(details: PartnerCatalogErrorDetails) {
    super(details.message);
    this.name = 'PartnerCatalogError';
    this.status = details.status;
    this.code = details.code;
    this.retryAfter = details.retryAfter;
    this.requestId = details.requestId;
  }
}

/** Reads an error answer; anything but `{ error, message }` with a known code is `unexpected_response`. */
export async function errorFromResponse(response: Response): Promise<PartnerCatalogError> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const { error, message } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const known = typeof error === 'string' && KNOWN_CODES.has(error) && typeof message === 'string';
  return new PartnerCatalogError({
    status: response.status,
    code: known ? (error as ErrorCode) : 'unexpected_response',
    message: known ? message : `Unexpected answer ${response.status}: ${text.slice(0, 200)}`,
    retryAfter: retryAfterSeconds(response.headers.get('Retry-After')),
    requestId: response.headers.get('X-Request-Id') ?? undefined,
  });
}

/** The API sends whole seconds; an HTTP date (from a proxy) is honoured too. */
function retryAfterSeconds(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (/^[0-9]+$/.test(header.trim())) return Number(header.trim());
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
