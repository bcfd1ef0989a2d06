import Koa, { type Context, type Next } from 'koa';
import { Router } from '@koa/router';
import helmet from 'koa-helmet';
import type { Logger } from 'pino';
import type { AuthenticateKey } from '../../application/authenticate-key.js';
import type { EnforceRateLimit } from '../../application/enforce-rate-limit.js';
import type { LookupById } from '../../application/lookup-by-id.js';
import type { LookupBySku } from '../../application/lookup-by-sku.js';
import type { ReadinessProbe } from '../../application/ports/readiness-probe.js';
import type { ReadChanges } from '../../application/read-changes.js';
import type { Principal } from '../../domain/api-key.js';
import { sendChangesPage, singleQueryValue } from './changes-response.js';
import { peerAddress, type ClientAddressOf } from './client-address.js';
import { isDocsPath, registerDocsRoutes } from './docs-routes.js';
import { sendError, sendThrown } from './error-response.js';
import { failureLogOf } from './failure-log.js';
import { sendLookupResult } from './lookup-response.js';
import { setRateLimitHeaders } from './rate-limit-headers.js';
import { requestIdFrom } from './request-id.js';
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
}

interface State {
  principal: Principal;
}

const API = '/api/v1/public';
const ALLOWED = 'GET, HEAD';

/** The Koa application: public API, operational endpoints, JSON errors for everything else. */
export function createHttpApp(deps: HttpAppDependencies, clientAddress: ClientAddressOf = peerAddress): Koa<State> {
  const app = new Koa<State>();
  app.proxy = false;
  // Every error is answered by `answerErrors`; this only sees failures after the answer was sent.
  app.on('error', (error: unknown) => deps.logger.error({ err: error }, 'response failed'));

  const router = new Router<State>({ sensitive: true, strict: true });
  const api = apiGuard(deps, clientAddress);
  router.get(`${API}/sku/:sku`, api, async (ctx) => {
    sendLookupResult(ctx, await deps.lookupBySku.execute({ partnerId: ctx.state.principal.partnerId, sku: ctx.params.sku ?? '' }));
  });
  router.get([`${API}/sku`, `${API}/sku/`], api, async (ctx) => {
    sendLookupResult(ctx, await deps.lookupBySku.execute({ partnerId: ctx.state.principal.partnerId, sku: '' }));
  });
  router.get(`${API}/products/:id`, api, async (ctx) => {
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

  app.use(logRequests(deps.logger));
  app.use(answerErrors(deps.logger));
  app.use(securityHeaders());
  app.use(router.routes());
  app.use((ctx) => {
    if (router.match(ctx.path, ctx.method).path.length > 0) {
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

function answerErrors(logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
    } catch (error) {
      if (!(await sendThrown(ctx, error))) failureLogOf(logger).unexpected(error, ctx.state.requestId as string | undefined);
    }
  };
}

/** One JSON line per request, with its ID; never a header value, query string or key. */
function logRequests(logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const started = performance.now();
    const requestId = requestIdFrom(ctx.get('X-Request-Id') || undefined);
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      logRequest(logger, { requestId, method: ctx.method, path: ctx.path, status: ctx.status, started, principal: (ctx.state as Partial<State>).principal });
    }
  };
}
