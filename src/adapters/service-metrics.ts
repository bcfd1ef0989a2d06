import type { KeyMode } from '../domain/api-key.js';

/**
 * What the service tells an operator's monitoring about its own work. Every label comes from a
 * fixed set: a route is the template a request matched, never the path as sent, and no key id, key
 * or SKU is ever passed; a partner only for the calls of a deprecated operation, so the operator
 * knows whom to tell (partners are the deployment's own, a set it chose). Calls are made on the
 * request path, so an implementation does no more than count.
 */
export interface RequestMetrics {
  /**
   * One answered request: the route template it matched (`/api/v1/public/sku/:sku`), or
   * UNMATCHED_ROUTE; its status; and the seconds from its arrival to its answer. Any listener may
   * record its own routes here (the partner portal, say, with its router's templates), as long as
   * the templates are a fixed set.
   */
  /** `mode` is the mode of the request's key: live for a request made without an accepted key. */
  observeRequest(route: string, status: number, seconds: number, mode: KeyMode): void;
}

/** The label of a request no route matched: a fixed value, so made-up paths add no series. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Which limit refused a request with 429: the key's window, or its address's failed authentications. */
export type RateLimitKind = 'key' | 'auth_failures';

/** The error codes of a refused authentication (docs/api.md, authentication). */
export type AuthFailureCode = 'missing_api_key' | 'invalid_api_key';

/** The response cache's side: whether a lookup was answered from memory. */
export interface ResponseCacheMetrics {
  responseCacheLookup(hit: boolean): void;
}

export interface ServiceMetrics extends RequestMetrics, ResponseCacheMetrics {
  rateLimitRejected(kind: RateLimitKind): void;
  authenticationFailed(code: AuthFailureCode): void;
  /** A call of a deprecated operation, by the partner whose key it carried; undefined when no key was taken. */
  deprecatedOperationCalled(operationId: string, partnerId: string | undefined): void;
}

/** Records nothing: metrics turned off (METRICS_PORT=0), and tests that do not read them. */
export const noMetrics: ServiceMetrics = {
  observeRequest: () => undefined,
  responseCacheLookup: () => undefined,
  rateLimitRejected: () => undefined,
  authenticationFailed: () => undefined,
  deprecatedOperationCalled: () => undefined,
};
