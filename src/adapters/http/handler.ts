import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpApp, type HttpAppDependencies } from './app.js';
import { peerAddress, type ClientAddressOf } from '../listening/client-address.js';
import { createLookupFastPath } from './lookup-fast-path.js';

/** What node:http calls for each request. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HttpHandlerOptions {
  /** Answer GET and HEAD lookups below Koa's middleware chain (default true); false serves all through Koa. */
  readonly fastPath?: boolean;
  /** Where a request comes from, for counting failed authentications (default: the peer's address). */
  readonly clientAddress?: ClientAddressOf;
}

/** The service's request handler: the lookup fast path first, the Koa app for everything else. */
export function createHttpHandler(deps: HttpAppDependencies, options: HttpHandlerOptions = {}): HttpHandler {
  const clientAddress = options.clientAddress ?? peerAddress;
  const koa = createHttpApp(deps, clientAddress).callback();
  if (options.fastPath === false) return (req, res) => void koa(req, res);
  const fast = createLookupFastPath(deps, clientAddress);
  return (req, res) => {
    if (!fast(req, res)) void koa(req, res);
  };
}
