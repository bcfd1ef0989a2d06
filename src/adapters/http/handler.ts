import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpApp, type HttpAppDependencies } from './app.js';
import { createLookupFastPath } from './lookup-fast-path.js';

/** What node:http calls for each request. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HttpHandlerOptions {
  /** Answer GET and HEAD lookups below Koa's middleware chain (default true); false serves all through Koa. */
  readonly fastPath?: boolean;
}

/** The service's request handler: the lookup fast path first, the Koa app for everything else. */
export function createHttpHandler(deps: HttpAppDependencies, options: HttpHandlerOptions = {}): HttpHandler {
  const koa = createHttpApp(deps).callback();
  if (options.fastPath === false) return (req, res) => void koa(req, res);
  const fast = createLookupFastPath(deps);
  return (req, res) => {
    if (!fast(req, res)) void koa(req, res);
  };
}
