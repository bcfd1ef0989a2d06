import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { PortalState } from './portal-state.js';

/** Where portal requests are counted, by route template (never the path: an invitation's token is in it). */
export interface PortalRequestObserver {
  observeRequest(route: string, status: number, seconds: number): void;
}

/** One log line and one observation per request, once its answer is settled, whatever it is. */
export function logRequests(logger: Logger, metrics?: PortalRequestObserver): Middleware<PortalState> {
  return async (ctx, next) => {
    const started = performance.now();
    ctx.state.route = 'unmatched';
    try {
      await next();
    } finally {
      const { route } = ctx.state;
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
