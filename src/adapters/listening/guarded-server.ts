import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { TIMEOUTS } from '../timeouts.js';
import { guardConnections, idleFor, type ConnectionLimits } from './connection-guard.js';
import { closeGracefully, listen, stopReading, type RequestHandler } from './listening.js';
import { API_SETTINGS, listenFailure, type ListenerSettings } from './listen-failure.js';

export interface RunningServer {
  readonly server: Server;
  /** The address actually bound (port 0 picks a free one). */
  readonly url: string;
  /** Stops accepting, lets requests in flight finish (at most `graceMs`), then resolves. */
  close(graceMs?: number): Promise<void>;
}

/** The codes of the answers a listener writes itself, for requests its handler never sees. */
export type RawAnswerCode =
  | 'bad_request' | 'request_timeout' | 'method_not_allowed' | 'misdirected_request' | 'payload_too_large'
  | 'too_many_connections' | 'too_many_pipelined_requests';

/** How a listener words the answers it writes itself: the API in its JSON error shape, the others in plain text. */
export type RawAnswerFormat = (code: RawAnswerCode, message: string) => { readonly contentType: string; readonly body: string };

export const jsonAnswers: RawAnswerFormat = (code, message) => ({
  contentType: 'application/json; charset=utf-8', body: JSON.stringify({ error: code, message }),
});

export const textAnswers: RawAnswerFormat = (_code, message) => ({ contentType: 'text/plain; charset=utf-8', body: `${message}\n` });

/**
 * One policy for every listener of the process (API, portal, metrics): each gets the same guards,
 * and only its bounds and wording differ.
 */
export interface ListenerPolicy {
  readonly limits: ConnectionLimits;
  readonly format: RawAnswerFormat;
  /** The methods named in `Allow` when CONNECT is refused. */
  readonly allow: string;
  /** How long a request's headers, and the whole request, may take to arrive (default `TIMEOUTS.httpHeadersMs` and `TIMEOUTS.httpRequestMs`). */
  readonly timeouts?: { readonly headersMs: number; readonly requestMs: number };
  /**
   * Host names this listener answers to (lower case, with the port when one is sent); undefined
   * answers any. A listener on loopback names only its loopback names, so a web page whose name
   * an attacker points at 127.0.0.1 (DNS rebinding) gets nothing from it.
   */
  readonly acceptsHost?: (host: string) => boolean;
  /** A declared body larger than this is refused with 413 before the handler sees it; undefined leaves that to the handler. */
  readonly maxBodyBytes?: number;
  /** Where refused connections are summed up. */
  readonly logger?: Logger;
  /** The settings that place this listener, named when it cannot listen (default PORT and HOST). */
  readonly settings?: ListenerSettings;
}

const MESSAGES = {
  malformed: 'Malformed HTTP request.',
  twoHosts: 'Malformed HTTP request: more than one Host header.',
  misdirected: 'This server does not answer to that host name.',
} as const;

/**
 * What every answer a listener writes itself carries besides its own fields: an error, never a
 * page, so nothing in it may be sniffed, framed, loaded, referred from or stored. The same for every
 * listener; each listener's handler adds its own (HSTS among them) to the answers it writes.
 */
export const RAW_ANSWER_HEADERS = [
  'X-Content-Type-Options: nosniff',
  "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'",
  'X-Frame-Options: DENY',
  'Referrer-Policy: no-referrer',
  'Cache-Control: no-store',
] as const;

/** An answer written straight to the socket, for requests the handler never sees; always closing. */
function answerRaw(socket: Duplex, status: string, answer: { contentType: string; body: string }, options: { head?: boolean; allow?: string; retryAfter?: number } = {}): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const headers = [
    `HTTP/1.1 ${status}`,
    `Content-Type: ${answer.contentType}`,
    `Content-Length: ${Buffer.byteLength(answer.body)}`,
    `X-Request-Id: ${randomUUID()}`,
    ...RAW_ANSWER_HEADERS,
    ...(options.allow === undefined ? [] : [`Allow: ${options.allow}`]),
    ...(options.retryAfter === undefined ? [] : [`Retry-After: ${options.retryAfter}`]),
    'Connection: close',
  ];
  socket.end(`${headers.join('\r\n')}\r\n\r\n${options.head === true ? '' : answer.body}`);
}

/** Whether the request carries more than one Host header, which Node would otherwise join silently. */
function hasTwoHosts(req: IncomingMessage): boolean {
  let seen = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (isHost(req.rawHeaders[i]!)) seen += 1;
  }
  return seen > 1;
}

/** `host` in any case, without making a lower-case copy of every header name. */
function isHost(name: string): boolean {
  // ASCII letters only: OR-ing 0x20 lowers a capital and leaves a small letter.
  return name.length === 4 && (name.charCodeAt(0) | 0x20) === 0x68 && (name.charCodeAt(1) | 0x20) === 0x6f
    && (name.charCodeAt(2) | 0x20) === 0x73 && (name.charCodeAt(3) | 0x20) === 0x74;
}

/** Refuses a request with an answer of the listener's own, closing the connection after it. */
function refuseRequest(req: IncomingMessage, res: ServerResponse, status: string, answer: { contentType: string; body: string }): void {
  res.shouldKeepAlive = false;
  answerRaw(req.socket, status, answer, { head: req.method === 'HEAD' });
}

/**
 * Listens with deliberate limits: small headers, bounded header and request times, short keep-alive,
 * bounded connections overall and per address, a bound on requests in flight per connection, one
 * Host header, and a connection that ends once answered if its request's body was not read.
 */
export async function startGuardedServer(handle: RequestHandler, options: { readonly port: number; readonly host: string; readonly policy: ListenerPolicy }): Promise<RunningServer> {
  const { policy } = options;
  const { format } = policy;
  const { headersMs, requestMs } = policy.timeouts ?? { headersMs: TIMEOUTS.httpHeadersMs, requestMs: TIMEOUTS.httpRequestMs };
  const timedOut = format('request_timeout', `The request did not arrive in time: its headers within ${headersMs / 1000} s, the whole request within ${requestMs / 1000} s.`);
  const badRequest = format('bad_request', MESSAGES.malformed);
  const twoHosts = format('bad_request', MESSAGES.twoHosts);
  const misdirected = format('misdirected_request', MESSAGES.misdirected);
  const connectRefused = format('method_not_allowed', `Method CONNECT is not allowed here; use ${policy.allow.replace(/, ([^,]+)$/, ' or $1')}.`);
  const tooLarge = policy.maxBodyBytes === undefined ? undefined : format('payload_too_large', `The request body is too large: at most ${policy.maxBodyBytes} bytes.`);
  let guarded: RequestHandler = handle;
  // Once closing, every answer says Connection: close, so a keep-alive client sends its next request
  // to another instance instead of onto a connection about to close (where it would meet a reset).
  let closing = false;
  // Node would answer a missing Host itself, in plain text; the check below keeps the listener's shape.
  // A request line without a version reads as HTTP/0.9, which no handler could answer.
  // Timeouts are checked every second rather than Node's default 30, so a 408 comes on time.
  const server = createServer({ maxHeaderSize: 16 * 1024, requireHostHeader: false, connectionsCheckingInterval: 1_000 }, (req, res) => {
    if (closing) res.shouldKeepAlive = false;
    // No function is made per request: each would be one more object for every answer.
    const host = req.headers.host;
    if (req.httpVersionMajor !== 1 || (req.httpVersionMinor === 1 && host === undefined)) return refuseRequest(req, res, '400 Bad Request', badRequest);
    if (hasTwoHosts(req)) return refuseRequest(req, res, '400 Bad Request', twoHosts);
    // An HTTP/1.0 request may name no host; a browser, which rebinding needs, always names one.
    if (policy.acceptsHost !== undefined && host !== undefined && !policy.acceptsHost(host.toLowerCase())) return refuseRequest(req, res, '421 Misdirected Request', misdirected);
    if (tooLarge !== undefined && Number(req.headers['content-length'] ?? 0) > policy.maxBodyBytes!) return refuseRequest(req, res, '413 Content Too Large', tooLarge);
    guarded(req, res);
  });
  guarded = guardConnections(server, endsUnreadBodies(handle), policy.limits, {
    logger: policy.logger,
    refuse: (socket, answer) => answerRaw(socket, answer.status, format(answer.body.error, answer.body.message), { retryAfter: answer.retryAfter }),
  });
  server.headersTimeout = headersMs;
  server.requestTimeout = requestMs;
  server.keepAliveTimeout = TIMEOUTS.httpKeepAliveMs;
  server.maxRequestsPerSocket = 10_000;
  // A socket with no traffic either way for this long (a client that stopped reading with answers
  // still to send) is closed, so it cannot hold its connection slot and buffers forever.
  server.timeout = TIMEOUTS.httpStalledSocketMs;
  // Node's own answer to unparsable requests is plain text; keep even those in the listener's shape.
  server.on('clientError', (error: Error & { rawPacket?: Buffer; code?: string }, socket: Socket) => {
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      answerRaw(socket, '408 Request Timeout', timedOut);
      return;
    }
    const head = error.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    answerRaw(socket, '400 Bad Request', badRequest, { head });
  });
  // Without a listener Node drops CONNECT without a word.
  server.on('connect', (_req, socket: Duplex) => answerRaw(socket, '405 Method Not Allowed', connectRefused, { allow: policy.allow }));
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const url = await listen(server, options.port, options.host).catch((error: unknown) => {
    throw listenFailure(error, policy.settings ?? API_SETTINGS, options.host, options.port);
  });
  return {
    server,
    url,
    close: (graceMs = TIMEOUTS.shutdownGraceMs) => {
      closing = true;
      // Answers under way whose headers are not written yet say it too.
      for (const socket of sockets) {
        const answer = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
        if (answer?.headersSent === false) answer.shouldKeepAlive = false;
      }
      return closeGracefully(server, graceMs, function* idle() {
        const now = Date.now();
        for (const socket of sockets) {
          const idleMs = idleFor(socket, now);
          if (idleMs !== null && idleMs >= TIMEOUTS.closingIdleConnectionMs) yield socket;
        }
      });
    },
  };
}

/**
 * Once an answer is sent, a request body still arriving is not read on: Node would read and drop
 * it to keep the connection (gigabytes, for a declared length of gigabytes), so the connection ends.
 * Reading stops at once and the answer is followed by the end of our side; the socket is dropped a
 * moment later, so that the client, still sending, reads the answer before the reset that dropping
 * a socket with unread data sends.
 */
function endsUnreadBodies(handle: RequestHandler): RequestHandler {
  return (req, res) => {
    const declaresBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
    if (declaresBody) {
      res.once('finish', () => {
        if (req.complete) return;
        stopReading(req.socket);
        req.socket.end();
        setTimeout(() => req.socket.destroy(), TIMEOUTS.unreadBodyLingerMs).unref();
      });
    }
    handle(req, res);
  };
}
