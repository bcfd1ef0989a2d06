import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

export interface RunningServer {
  readonly server: Server;
  /** The address actually bound (port 0 picks a free one). */
  readonly url: string;
  /** Stops accepting, lets requests in flight finish (at most `graceMs`), then resolves. */
  close(graceMs?: number): Promise<void>;
}

const BAD_REQUEST = JSON.stringify({ error: 'bad_request', message: 'Malformed HTTP request.' });

/** Listens with deliberate limits: small headers, bounded header and request times, short keep-alive. */
export async function startHttpServer(app: Koa, options: { port: number; host: string }): Promise<RunningServer> {
  const handle = app.callback();
  const server = createServer({ maxHeaderSize: 16 * 1024 }, (req, res) => void handle(req, res));
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  server.keepAliveTimeout = 5_000;
  server.maxRequestsPerSocket = 10_000;
  // Node's own answer to unparsable requests is plain text; keep even those in the JSON shape.
  server.on('clientError', (_error, socket) => {
    if (socket.writable) {
      socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${BAD_REQUEST.length}\r\nConnection: close\r\n\r\n${BAD_REQUEST}`);
    } else {
      socket.destroy();
    }
  });
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
