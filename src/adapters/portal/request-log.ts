import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { UNMATCHED_ROUTE } from '../service-metrics.js';
import type { PortalState } from './portal-state.js';

/** Where portal requests are counted, by route template (never the path: an invitation's token is in it). */
export interface PortalRequestObserver {
  observeRequest(route: string, status: number, seconds: number): void;
}

/**
 * The template of a route whose path matched and whose method did not (answered 405): counted under
 * its template, as the API counts such requests, rather than as a path no route has.
 */
function pathTemplateOf(ctx: object): string | undefined {
  // The router lists there the layers whose path matched, whatever their method.
  const { matched } = ctx as { readonly matched?: readonly { readonly path: string | RegExp; readonly methods: readonly string[] }[] };
  const path = matched?.findLast((layer) => layer.methods.length > 0)?.path;
  return typeof path === 'string' ? path : undefined;
}

/** One log line and one observation per request, once its answer is settled, whatever it is. */
export function logRequests(logger: Logger, metrics?: PortalRequestObserver): Middleware<PortalState> {
  return async (ctx, next) => {
    const started = performance.now();
    ctx.state.route = UNMATCHED_ROUTE;
    try {
      await next();
    } finally {
      const route = ctx.state.route === UNMATCHED_ROUTE ? pathTemplateOf(ctx) ?? UNMATCHED_ROUTE : ctx.state.route;
      const ms = performance.now() - started;
      // The route template, never the path: an invitation's token is part of its path.
      logger.info({ portal: true, method: ctx.method, route, status: ctx.status, ms: Math.round(ms * 100) / 100 }, 'request');
      metrics?.observeRequest(route, ctx.status, ms / 1000);
    }
  };
}

/** Names a route's requests in the log and the metrics. */
export function named(route: string): Middleware<PortalState> {
  return async (ctx, next) => {
    ctx.state.route = route;
    await next();
  };
}
