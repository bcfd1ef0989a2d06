import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type Koa from 'koa';

export interface RunningPortal {
  readonly url: string;
  close(graceMs?: number): Promise<void>;
}

/** Slow clients are cut off: a portal form is small and quick to send. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;

/** Serves the portal on its own listener, apart from the API. */
export async function startPortalServer(app: Koa, options: { port: number; host: string }): Promise<RunningPortal> {
  const handle = app.callback();
  const server: Server = createServer({ maxHeaderSize: 16 * 1024 }, (req, res) => void handle(req, res));
  // A request the parser refuses, or a client gone mid-body, is the client's: its socket closes, nothing is logged.
  server.on('clientError', (_error, socket: Socket) => socket.destroy());
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: (graceMs = 5_000) => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, graceMs).unref();
    }),
  };
}
