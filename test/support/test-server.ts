import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Writable } from 'node:stream';
import { trustedProxies } from '../../src/adapters/listening/client-address.js';
import { createHttpHandler, type HttpHandlerOptions } from '../../src/adapters/http/handler.js';
import { startHttpServer, type HttpServerOptions } from '../../src/adapters/http/server.js';
import type { RunningServer } from '../../src/adapters/listening/guarded-server.js';
import { createLogger } from '../../src/adapters/logging/logger.js';
import { MemoryAuthFailureGuard } from '../../src/adapters/memory/memory-auth-failure-guard.js';
import { processCursorKeys } from '../../src/adapters/memory/process-cursor-keys.js';
import type { AuthFailureGuard } from '../../src/application/access/auth-failure-guard.js';
import type { ChangesFeed } from '../../src/application/changes/changes-feed.js';
import { systemClock } from '../../src/application/common/clock.js';
import { createContainer, TOKENS, type Infrastructure } from '../../src/composition/container.js';
import { openMemoryDeployment } from './deployments.js';
import { checkAgainstOpenApi } from './openapi-check.js';

export interface Response {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The body parsed as JSON; throws if it is not JSON. */
  json(): unknown;
}

/** A real server on an ephemeral port, over the given adapters, with its log lines captured. */
export interface TestServer {
  readonly url: string;
  readonly logs: string[];
  /** `localAddress` sends from another loopback address (any of 127.0.0.0/8), as another client would. */
  request(path: string, options?: { method?: string; headers?: Record<string, string>; localAddress?: string }): Promise<Response>;
  close(): Promise<void>;
}

/** Failed authentications are not held back unless a test brings its own guard. */
export const lenientAuthFailureGuard = (): AuthFailureGuard =>
  new MemoryAuthFailureGuard({ failuresPerWindow: Number.MAX_SAFE_INTEGER, clock: systemClock });

export async function startTestServer(
  infrastructure: Omit<Infrastructure, 'logger' | 'authFailures' | 'cursorKeys'> & Partial<Pick<Infrastructure, 'authFailures' | 'cursorKeys'>>,
  options: HttpHandlerOptions & Partial<Pick<HttpServerOptions, 'limits' | 'timeouts'>> & { traceIds?: boolean } = {},
): Promise<TestServer> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
      done();
    },
  });
  const logger = createLogger('info', sink, { traceIds: options.traceIds === true });
  // A key of the server's own unless the test brings one: its cursors die with it, as memory storage's do.
  const api: Infrastructure = { authFailures: lenientAuthFailureGuard(), cursorKeys: processCursorKeys(), ...infrastructure, logger };
  // The service's own bindings, from the composition root, over the test's adapters.
  const handler = createHttpHandler(createContainer({ api }).get(TOKENS.HttpDependencies), options);
  const server: RunningServer = await startHttpServer(handler, {
    port: 0,
    host: '127.0.0.1',
    logger,
    limits: options.limits ?? { maxConnections: 4_096, maxConnectionsPerAddress: 4_096, trustedProxies: trustedProxies([]) },
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
  });
  return {
    url: server.url,
    logs,
    // Every response any HTTP test sees must be one the OpenAPI document describes.
    request: async (path, options = {}) => {
      const method = options.method ?? 'GET';
      const response = await send(server.url, path, method, options.headers ?? {}, options.localAddress);
      checkAgainstOpenApi({ method, path, ...response });
      return response;
    },
    close: () => server.close(1_000),
  };
}

/** The feed of a catalog built without an import: nothing was ever recorded in it. */
export const noChanges: ChangesFeed = { read: () => Promise.resolve({ entries: [], horizon: 0 }) };

/**
 * Memory storage over the shared fixture, opened by the composition root as the service opens it
 * from a catalog file. The fixture is imported, so its feed holds the import: tests of an empty feed bring `noChanges`.
 */
export async function memoryInfrastructure(options: { limit?: number } = {}): Promise<Omit<Infrastructure, 'logger'>> {
  return (await openMemoryDeployment(options)).api;
}

/** Sends the path exactly as written: no normalisation, no re-encoding. */
function send(base: string, path: string, method: string, headers: Record<string, string>, localAddress?: string): Promise<Response> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method, headers, agent: false, ...(localAddress === undefined ? {} : { localAddress }) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) as unknown });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
