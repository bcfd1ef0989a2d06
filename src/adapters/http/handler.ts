import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpApp } from './app.js';
import { peerAddress, type ClientAddressOf } from '../listening/client-address.js';
import { createFastPath } from './fast-path.js';
import { OPERATIONS, type ApiUseCases } from './operations.js';
import { DEFAULT_PUBLIC_BASE_URL, type DocumentInfo, type Operation } from './operation.js';
import { createPipeline, type PipelineDependencies } from './pipeline.js';

/** What node:http calls for each request. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HttpHandlerOptions {
  /** Route plain GET and HEAD requests without Koa's middleware chain (default true); false routes all through Koa. */
  readonly fastPath?: boolean;
  /** Where a request comes from, for counting failed authentications (default: the peer's address). */
  readonly clientAddress?: ClientAddressOf;
  /** The API's address as partners reach it (default: the default HOST and PORT). */
  readonly publicBaseUrl?: string;
  /** Whom partners contact and the terms' address, for the OpenAPI document (default: DEFAULT_DOCUMENT_INFO). */
  readonly documentInfo?: DocumentInfo;
  /** The operation table (default: OPERATIONS); a test's own marks an operation deprecated. */
  readonly operations?: readonly Operation<ApiUseCases>[];
}

/** The API's request handler: the operations, routed by the fast path or by Koa, answered by one pipeline. */
export function createHttpHandler(deps: PipelineDependencies<ApiUseCases>, options: HttpHandlerOptions = {}): HttpHandler {
  const clientAddress = options.clientAddress ?? peerAddress;
  const operations = options.operations ?? OPERATIONS;
  const pipeline = createPipeline(deps, operations, options.publicBaseUrl ?? DEFAULT_PUBLIC_BASE_URL, options.documentInfo);
  const koa = createHttpApp(operations, pipeline, deps.logger, clientAddress).callback();
  if (options.fastPath === false) return (req, res) => void koa(req, res);
  const fast = createFastPath(operations, pipeline, clientAddress);
  return (req, res) => {
    if (!fast(req, res)) void koa(req, res);
  };
}
