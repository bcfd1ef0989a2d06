import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout } from 'node:timers/promises';
import type { Principal } from '../../domain/api-key.js';
import type { LookupResult } from '../../domain/lookup-result.js';
import { PRODUCT_ROUTE_TEMPLATE, SKU_ROUTE_TEMPLATE, type HttpAppDependencies } from './app.js';
import { peerAddress, type ClientAddressOf } from '../listening/client-address.js';
import { ERROR_CACHE_CONTROL, errorAnswerFor } from './error-response.js';
import { failureLogOf } from './failure-log.js';
import { LOOKUP_CACHE_CONTROL, LOOKUP_VARY, ifNoneMatchNames, serialize } from './lookup-response.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { countRefusal } from './refusal-metrics.js';
import { requestIdFrom } from './request-id.js';
import { logRequest } from './request-log.js';
import { helmetHeaders } from './security-headers.js';

/** Answers the request and returns true, or returns false having touched nothing. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

const SKU_ROUTE = '/api/v1/public/sku/';
const ID_ROUTE = '/api/v1/public/products/';
/** Segments that need no percent-decoding and that the router would match as they are. */
const PLAIN_SEGMENT = /^[A-Za-z0-9._~-]{1,200}$/;
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The two lookup routes, answered below Koa's middleware chain: the same checks in the same
 * order (key, rate limit, lookup), the same headers, bodies, log line and metrics as the Koa app,
 * whose routes stay the reference (a differential test compares the two answer by answer).
 * Anything unusual in the request line (another method, an encoded or empty segment) is left to Koa.
 */
export function createLookupFastPath(deps: HttpAppDependencies, clientAddress: ClientAddressOf = peerAddress): FastPath {
  const security = helmetHeaders().flat();
  const failures = failureLogOf(deps.logger);
  const metrics = deps.metrics;

  async function answer(req: IncomingMessage, res: ServerResponse, path: string, bySku: boolean, segment: string): Promise<void> {
    const started = performance.now();
    const requestId = requestIdFrom(req.headers['x-request-id'] as string | undefined);
    const headers: string[] = ['X-Request-Id', requestId, ...security];
    let principal: Principal | undefined;
    let status: number;
    try {
      principal = await deps.authenticateKey.execute({
        authorization: req.headers.authorization || undefined,
        apiKey: (req.headers['x-api-key'] as string | undefined) || undefined,
        clientAddress: clientAddress(req),
      });
      for (const [name, value] of rateLimitHeaders(await deps.enforceRateLimit.execute(principal))) headers.push(name, value);
      const partnerId = principal.partnerId;
      const result: LookupResult = bySku
        ? await deps.lookupBySku.execute({ partnerId, sku: segment })
        : await deps.lookupById.execute({ partnerId, id: segment });
      const { body, etag } = serialize(result);
      headers.push('ETag', etag, 'Cache-Control', LOOKUP_CACHE_CONTROL, 'Vary', LOOKUP_VARY);
      if (ifNoneMatchNames(req.headers['if-none-match'] ?? '', etag)) {
        status = 304;
        res.writeHead(status, headers).end();
      } else {
        status = 200;
        headers.push('Content-Type', JSON_TYPE, 'Content-Length', String(body.length));
        res.writeHead(status, headers).end(req.method === 'HEAD' ? undefined : body);
      }
    } catch (error) {
      countRefusal(metrics, error);
      const problem = errorAnswerFor(error);
      if (!problem.expected) failures.unexpected(error, requestId);
      if (problem.delayMs > 0) await setTimeout(problem.delayMs);
      const body = Buffer.from(JSON.stringify(problem.body), 'utf8');
      for (const [name, value] of problem.headers) headers.push(name, value);
      headers.push('Cache-Control', ERROR_CACHE_CONTROL, 'Content-Type', JSON_TYPE, 'Content-Length', String(body.length));
      status = problem.status;
      if (res.headersSent || res.destroyed) res.destroy();
      else res.writeHead(status, headers).end(req.method === 'HEAD' ? undefined : body);
    }
    logRequest(deps.logger, { requestId, method: req.method, path, status, started, principal });
    metrics.observeRequest(bySku ? SKU_ROUTE_TEMPLATE : PRODUCT_ROUTE_TEMPLATE, status, (performance.now() - started) / 1000);
  }

  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const bySku = path.startsWith(SKU_ROUTE);
    if (!bySku && !path.startsWith(ID_ROUTE)) return false;
    const segment = path.slice(bySku ? SKU_ROUTE.length : ID_ROUTE.length);
    if (!PLAIN_SEGMENT.test(segment)) return false;
    void answer(req, res, path, bySku, segment);
    return true;
  };
}
