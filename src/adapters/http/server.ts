import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { TIMEOUTS } from '../../application/timeouts.js';
import { closeGracefully, listen } from '../listening/listening.js';
import { guardConnections, type ConnectionLimits } from './connection-guard.js';
import type { HttpHandler } from './handler.js';

export interface RunningServer {
  readonly server: Server;
  /** The address actually bound (port 0 picks a free one). */
  readonly url: string;
  /** Stops accepting, lets requests in flight finish (at most `graceMs`), then resolves. */
  close(graceMs?: number): Promise<void>;
}

const BAD_REQUEST = JSON.stringify({ error: 'bad_request', message: 'Malformed HTTP request.' });
const CONNECT_REFUSED = JSON.stringify({ error: 'method_not_allowed', message: 'Method CONNECT is not allowed here; use GET or HEAD.' });
const requestTimedOut = (headersMs: number, requestMs: number): string => JSON.stringify({
  error: 'request_timeout',
  message: `The request did not arrive in time: its headers within ${headersMs / 1000} s, the whole request within ${requestMs / 1000} s.`,
});

/** An answer written straight to the socket, for requests the app never sees; always JSON, always closing. */
function answerRaw(socket: Duplex, status: string, body: string, options: { head?: boolean; allow?: boolean; retryAfter?: number } = {}): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const headers = [
    `HTTP/1.1 ${status}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${randomUUID()}`,
    ...(options.allow === true ? ['Allow: GET, HEAD'] : []),
    ...(options.retryAfter === undefined ? [] : [`Retry-After: ${options.retryAfter}`]),
    'Connection: close',
  ];
  socket.end(`${headers.join('\r\n')}\r\n\r\n${options.head === true ? '' : body}`);
}

export interface HttpServerOptions {
  readonly port: number;
  readonly host: string;
  readonly limits: ConnectionLimits;
  /** Where refused connections are summed up. */
  readonly logger?: Logger;
  /** How long a request's headers, and the whole request, may take to arrive (default `TIMEOUTS.httpHeadersMs` and `TIMEOUTS.httpRequestMs`). */
  readonly timeouts?: { readonly headersMs: number; readonly requestMs: number };
}

/**
 * Listens with deliberate limits: small headers, bounded header and request times, short keep-alive,
 * bounded connections overall and per address, and a bound on requests in flight per connection.
 */
export async function startHttpServer(handle: HttpHandler, options: HttpServerOptions): Promise<RunningServer> {
  const { limits } = options;
  const { headersMs, requestMs } = options.timeouts ?? { headersMs: TIMEOUTS.httpHeadersMs, requestMs: TIMEOUTS.httpRequestMs };
  const timedOutBody = requestTimedOut(headersMs, requestMs);
  let guarded: HttpHandler = handle;
  // Node would answer a missing Host itself, in plain text; the check below keeps the JSON shape.
  // A request line without a version reads as HTTP/0.9, which the app could never answer.
  // Timeouts are checked every second rather than Node's default 30, so a 408 comes on time.
  const server = createServer({ maxHeaderSize: 16 * 1024, requireHostHeader: false, connectionsCheckingInterval: 1_000 }, (req, res) => {
    if (req.httpVersionMajor !== 1 || (req.httpVersionMinor === 1 && req.headers.host === undefined)) {
      res.shouldKeepAlive = false;
      answerRaw(req.socket, '400 Bad Request', BAD_REQUEST, { head: req.method === 'HEAD' });
      return;
    }
    guarded(req, res);
  });
  guarded = guardConnections(server, handle, limits, {
    logger: options.logger,
    refuse: (socket, answer) => answerRaw(socket, answer.status, JSON.stringify(answer.body), { retryAfter: answer.retryAfter }),
  });
  server.headersTimeout = headersMs;
  server.requestTimeout = requestMs;
  server.keepAliveTimeout = TIMEOUTS.httpKeepAliveMs;
  server.maxRequestsPerSocket = 10_000;
  // A socket with no traffic either way for this long (a client that stopped reading with answers
  // still to send) is closed, so it cannot hold its connection slot and buffers forever.
  server.timeout = TIMEOUTS.httpStalledSocketMs;
  // Node's own answer to unparsable requests is plain text; keep even those in the JSON shape.
  server.on('clientError', (error: Error & { rawPacket?: Buffer; code?: string }, socket: Socket) => {
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      answerRaw(socket, '408 Request Timeout', timedOutBody);
      return;
    }
    const head = error.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    answerRaw(socket, '400 Bad Request', BAD_REQUEST, { head });
  });
  // Without a listener Node drops CONNECT without a word.
  server.on('connect', (_req, socket: Duplex) => answerRaw(socket, '405 Method Not Allowed', CONNECT_REFUSED, { allow: true }));
  const url = await listen(server, options.port, options.host);
  return { server, url, close: (graceMs = TIMEOUTS.shutdownGraceMs) => closeGracefully(server, graceMs) };
}
