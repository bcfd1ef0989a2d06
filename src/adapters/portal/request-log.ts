import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { traceIdOf } from '../tracing/trace-context.js';
import { UNMATCHED_ROUTE } from '../service-metrics.js';
import { runIn, SPAN_FAILED, tracing } from '../tracing/tracing.js';
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

/** The route a request is named by once answered: its own, the template of a path matched with another method, or unmatched. */
function routeOf(ctx: { readonly state: PortalState }): string {
  return ctx.state.route === UNMATCHED_ROUTE ? pathTemplateOf(ctx) ?? UNMATCHED_ROUTE : ctx.state.route;
}

/**
 * A server span per portal request while tracing is on (decisions: traces), named by its route
 * template once answered: never its path (an invitation's token is in it), a cookie or a form's
 * fields. First of the middleware, so the log line (which names it: `ctx.state.span`) is within it.
 */
export function traceRequests(): Middleware<PortalState> {
  return async (ctx, next) => {
    const on = tracing();
    if (on === undefined) {
      await next();
      return;
    }
    const traceparent = ctx.get('traceparent');
    const continued = traceIdOf(traceparent) === undefined ? undefined : traceparent;
    const parent = on.sampleServer(continued, continued === undefined ? undefined : ctx.get('tracestate') || undefined);
    if (parent === undefined) {
      await next();
      return;
    }
    const span = on.startServer(`${ctx.method} portal`, parent, { 'http.request.method': ctx.method, 'pcat.listener': 'portal' });
    ctx.state.span = span;
    try {
      await runIn(span, next);
    } finally {
      const route = routeOf(ctx);
      span.updateName(`${ctx.method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': ctx.status });
      if (ctx.status >= 500) span.setStatus({ code: SPAN_FAILED });
      span.end();
    }
  };
}

/** One log line and one observation per request, once its answer is settled, whatever it is. */
export function logRequests(logger: Logger, metrics?: PortalRequestObserver): Middleware<PortalState> {
  return async (ctx, next) => {
    const started = performance.now();
    ctx.state.route = UNMATCHED_ROUTE;
    try {
      await next();
    } finally {
      const route = routeOf(ctx);
      const ms = performance.now() - started;
      // The route template, never the path: an invitation's token is part of its path.
      const ids = ctx.state.span?.spanContext();
      const trace = ids === undefined ? {} : { trace_id: ids.traceId, span_id: ids.spanId };
      logger.info({ portal: true, method: ctx.method, route, status: ctx.status, ms: Math.round(ms * 100) / 100, ...trace }, 'request');
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
