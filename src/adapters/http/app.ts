import Koa, { type Context, type Next } from 'koa';
import { Router } from '@koa/router';
import helmet from 'koa-helmet';
import type { Logger } from 'pino';
import type { AuthenticateKey } from '../../application/authenticate-key.js';
import type { EnforceRateLimit } from '../../application/enforce-rate-limit.js';
import type { LookupById } from '../../application/lookup-by-id.js';
import type { LookupBySku } from '../../application/lookup-by-sku.js';
import type { ReadinessProbe } from '../../application/ports/readiness-probe.js';
import { UNMATCHED_ROUTE, type ServiceMetrics } from '../../application/ports/service-metrics.js';
import type { ReadChanges } from '../../application/read-changes.js';
import type { Principal } from '../../domain/api-key.js';
import { sendChangesPage, singleQueryValue } from './changes-response.js';
import { peerAddress, type ClientAddressOf } from '../listening/client-address.js';
import { isDocsPath, registerDocsRoutes } from './docs-routes.js';
import { sendError, sendThrown } from './error-response.js';
import { failureLogOf } from './failure-log.js';
import { sendLookupResult } from './lookup-response.js';
import { setRateLimitHeaders } from './rate-limit-headers.js';
import { requestIdFrom } from './request-id.js';
import { countRefusal } from './refusal-metrics.js';
import { logRequest } from './request-log.js';
import { DOCS_HELMET_OPTIONS } from './security-headers.js';

export interface HttpAppDependencies {
  readonly authenticateKey: AuthenticateKey;
  readonly enforceRateLimit: EnforceRateLimit;
  readonly lookupBySku: LookupBySku;
  readonly lookupById: LookupById;
  readonly readChanges: ReadChanges;
  readonly readiness: ReadinessProbe;
  readonly logger: Logger;
  readonly metrics: ServiceMetrics;
}

interface State {
  principal: Principal;
  /** The route template of a 405, whose path matched a route but whose method did not. */
  route?: string;
}

const API = '/api/v1/public';
/** The lookups' route templates, which the fast path records its requests under too. */
export const SKU_ROUTE_TEMPLATE = `${API}/sku/:sku`;
export const PRODUCT_ROUTE_TEMPLATE = `${API}/products/:id`;
const ALLOWED = 'GET, HEAD';

/** The Koa application: public API, operational endpoints, JSON errors for everything else. */
export function createHttpApp(deps: HttpAppDependencies, clientAddress: ClientAddressOf = peerAddress): Koa<State> {
  const app = new Koa<State>();
  app.proxy = false;
  // Every error is answered by `answerErrors`; this only sees failures after the answer was sent.
  app.on('error', (error: unknown) => deps.logger.error({ err: error }, 'response failed'));

  const router = new Router<State>({ sensitive: true, strict: true });
  const api = apiGuard(deps, clientAddress);
  router.get(SKU_ROUTE_TEMPLATE, api, async (ctx) => {
    sendLookupResult(ctx, await deps.lookupBySku.execute({ partnerId: ctx.state.principal.partnerId, sku: ctx.params.sku ?? '' }));
  });
  router.get([`${API}/sku`, `${API}/sku/`], api, async (ctx) => {
    sendLookupResult(ctx, await deps.lookupBySku.execute({ partnerId: ctx.state.principal.partnerId, sku: '' }));
  });
  router.get(PRODUCT_ROUTE_TEMPLATE, api, async (ctx) => {
    sendLookupResult(ctx, await deps.lookupById.execute({ partnerId: ctx.state.principal.partnerId, id: ctx.params.id ?? '' }));
  });
  router.get([`${API}/products`, `${API}/products/`], api, async (ctx) => {
    sendLookupResult(ctx, await deps.lookupById.execute({ partnerId: ctx.state.principal.partnerId, id: '' }));
  });
  // Other query parameters are ignored, as on the lookups.
  router.get(`${API}/changes`, api, async (ctx) => {
    sendChangesPage(ctx, await deps.readChanges.execute({
      partnerId: ctx.state.principal.partnerId,
      limit: singleQueryValue(ctx.query.limit, 'invalid_limit', 'limit'),
      cursor: singleQueryValue(ctx.query.cursor, 'invalid_cursor', 'cursor'),
    }));
  });
  registerDocsRoutes(router);
  router.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const ready = await deps.readiness.isReady().catch(() => false);
    ctx.set('Cache-Control', 'no-store');
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'unavailable' };
  });

  app.use(recordRequests(deps.logger, deps.metrics));
  app.use(answerErrors(deps.logger, deps.metrics));
  app.use(securityHeaders());
  app.use(router.routes());
  app.use((ctx) => {
    const route = router.match(ctx.path, ctx.method).path.at(-1)?.path;
    if (route !== undefined) {
      if (typeof route === 'string') ctx.state.route = route;
      ctx.set('Allow', ALLOWED);
      sendError(ctx, 405, 'method_not_allowed', `Method ${ctx.method} is not allowed here; use GET or HEAD.`);
    } else {
      sendError(ctx, 404, 'not_found', 'No such endpoint.');
    }
  });
  return app;
}

/** Check order (docs/api.md, order of checks): authentication, then the rate limit, then the route's own work. */
function apiGuard(deps: HttpAppDependencies, clientAddress: ClientAddressOf) {
  return async (ctx: Context & { state: State }, next: Next): Promise<void> => {
    const principal = await deps.authenticateKey.execute({
      authorization: ctx.get('Authorization') || undefined,
      apiKey: ctx.get('X-API-Key') || undefined,
      clientAddress: clientAddress(ctx.req),
    });
    ctx.state.principal = principal;
    setRateLimitHeaders(ctx, await deps.enforceRateLimit.execute(principal));
    await next();
  };
}

/** Helmet's defaults on every answer; the docs' own options on the docs, so they render over plain HTTP. */
function securityHeaders() {
  const strict = helmet();
  const docs = helmet(DOCS_HELMET_OPTIONS);
  return async (ctx: Context, next: Next): Promise<void> => {
    await (isDocsPath(ctx.path) ? docs : strict)(ctx, next);
  };
}

function answerErrors(logger: Logger, metrics: ServiceMetrics) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
    } catch (error) {
      countRefusal(metrics, error);
      if (!(await sendThrown(ctx, error))) failureLogOf(logger).unexpected(error, ctx.state.requestId as string | undefined);
    }
  };
}

/**
 * One JSON line per request, with its ID, never a header value, query string or key; and its
 * figures, under the route template the router matched.
 */
function recordRequests(logger: Logger, metrics: ServiceMetrics) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const started = performance.now();
    const requestId = requestIdFrom(ctx.get('X-Request-Id') || undefined);
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const state = ctx.state as Partial<State>;
      logRequest(logger, { requestId, method: ctx.method, path: ctx.path, status: ctx.status, started, principal: state.principal });
      metrics.observeRequest(state.route ?? routeTemplateOf(ctx), ctx.status, (performance.now() - started) / 1000);
    }
  };
}

/** The template of the route @koa/router ran for the request (set as it runs one), or UNMATCHED_ROUTE. */
function routeTemplateOf(ctx: Context): string {
  const matched = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
  return typeof matched === 'string' ? matched : UNMATCHED_ROUTE;
}
