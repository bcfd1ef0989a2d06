import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
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

/** An answer written straight to the socket, for requests the app never sees; always JSON, always closing. */
function answerRaw(socket: Duplex, status: string, body: string, options: { head?: boolean; allow?: boolean } = {}): void {
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
    'Connection: close',
  ];
  socket.end(`${headers.join('\r\n')}\r\n\r\n${options.head === true ? '' : body}`);
}

/** Listens with deliberate limits: small headers, bounded header and request times, short keep-alive. */
export async function startHttpServer(handle: HttpHandler, options: { port: number; host: string }): Promise<RunningServer> {
  // Node would answer a missing Host itself, in plain text; the check below keeps the JSON shape.
  // A request line without a version reads as HTTP/0.9, which the app could never answer.
  const server = createServer({ maxHeaderSize: 16 * 1024, requireHostHeader: false }, (req, res) => {
    if (req.httpVersionMajor !== 1 || (req.httpVersionMinor === 1 && req.headers.host === undefined)) {
      res.shouldKeepAlive = false;
      answerRaw(req.socket, '400 Bad Request', BAD_REQUEST, { head: req.method === 'HEAD' });
      return;
    }
    handle(req, res);
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  server.keepAliveTimeout = 5_000;
  server.maxRequestsPerSocket = 10_000;
  // Node's own answer to unparsable requests is plain text; keep even those in the JSON shape.
  server.on('clientError', (error: Error & { rawPacket?: Buffer }, socket: Socket) => {
    const head = error.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    answerRaw(socket, '400 Bad Request', BAD_REQUEST, { head });
  });
  // Without a listener Node drops CONNECT without a word.
  server.on('connect', (_req, socket: Duplex) => answerRaw(socket, '405 Method Not Allowed', CONNECT_REFUSED, { allow: true }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port, family } = server.address() as AddressInfo;
  const host = family === 'IPv6' ? `[${address}]` : address;
  return {
    server,
    url: `http://${host}:${port}`,
    close: (graceMs = 10_000) => closeGracefully(server, graceMs),
  };
}

async function closeGracefully(server: Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive sockets become idle as their last response ends; close each as soon as it does.
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearInterval(sweep);
  clearTimeout(deadline);
}
