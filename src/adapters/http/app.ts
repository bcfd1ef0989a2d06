import type { IncomingMessage } from 'node:http';
import Koa, { type Context } from 'koa';
import { Router } from '@koa/router';
import type { Logger } from 'pino';
import { peerAddress, type ClientAddressOf } from '../listening/client-address.js';
import { emptyParameterPaths, pathTemplate, type Operation } from './operation.js';
import { type Pipeline, type PipelineRequest, type Route } from './pipeline.js';
import { readQuery, type QueryParameters } from './query-parameters.js';

/** A request header by its lower-case name, as the operations read them; empty is absent. */
export function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return (Array.isArray(value) ? value.join(', ') : value) || undefined;
}

/**
 * The request's path as Koa reads it, or, for a target Koa reads no path from (such as `//a@?#b`,
 * where its URL parser takes `//a@` for an authority), the target up to its query or fragment.
 */
function pathOf(ctx: Context): string {
  const parsed = ctx.path as string | null;
  if (parsed !== null) return parsed;
  const target = ctx.req.url ?? '';
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}

/**
 * The Koa application: a route for each operation, and JSON errors for everything else. Koa only
 * routes (percent-decoding the path's parameters); every request is answered by the pipeline.
 */
export function createHttpApp<UseCases>(
  operations: readonly Operation<UseCases>[], pipeline: Pipeline<UseCases>, logger: Logger, clientAddress: ClientAddressOf = peerAddress,
): Koa {
  const app = new Koa();
  app.proxy = false;
  // The pipeline answers every error; this only sees failures after the answer was sent.
  app.on('error', (error: unknown) => logger.error({ err: error }, 'response failed'));

  const answer = async (ctx: Context, route: Route<UseCases>, params: Record<string, string>): Promise<void> => {
    ctx.respond = false;
    // Read from the request target as the fast path reads it, not from Koa's own parse, which stops at 1,000 pairs.
    let query: QueryParameters | undefined;
    const request: PipelineRequest = {
      method: ctx.method,
      path: pathOf(ctx),
      params,
      query: (name) => (query ??= readQuery(ctx.req.url ?? ''))[name],
      header: (name) => headerValue(ctx.req, name),
      clientAddress: clientAddress(ctx.req),
      publicBaseUrl: pipeline.publicBaseUrl,
      documentInfo: pipeline.documentInfo,
    };
    await pipeline.respond(route, request, ctx.res);
  };

  const router = new Router({ sensitive: true, strict: true });
  for (const operation of operations) {
    const route = { kind: 'operation', operation } as const;
    const { route: template, parameter } = pathTemplate(operation.path);
    router.get(template, (ctx) => answer(ctx, route, ctx.params));
    const empty = emptyParameterPaths(operation, operations);
    if (empty.length > 0) router.get(empty, (ctx) => answer(ctx, route, { [parameter?.name ?? '']: '' }));
  }
  app.use(router.routes());
  app.use((ctx) => {
    const template = router.match(pathOf(ctx), ctx.method).path.at(-1)?.path;
    return answer(ctx, template === undefined ? { kind: 'not_found' } : { kind: 'method_not_allowed', template: String(template) }, {});
  });
  return app;
}
