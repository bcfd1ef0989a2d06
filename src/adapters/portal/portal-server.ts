import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type Koa from 'koa';
import { closeGracefully, listen } from '../listening/listening.js';

export interface RunningPortal {
  readonly url: string;
  close(graceMs?: number): Promise<void>;
}

/** Slow clients are cut off: a portal form is small and quick to send. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const CLOSE_GRACE_MS = 5_000;

/** Serves the portal on its own listener, apart from the API. */
export async function startPortalServer(app: Koa, options: { port: number; host: string }): Promise<RunningPortal> {
  const handle = app.callback();
  const server: Server = createServer({ maxHeaderSize: 16 * 1024 }, (req, res) => void handle(req, res));
  // A request the parser refuses, or a client gone mid-body, is the client's: its socket closes, nothing is logged.
  server.on('clientError', (_error, socket: Socket) => socket.destroy());
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  const url = await listen(server, options.port, options.host);
  return { url, close: (graceMs = CLOSE_GRACE_MS) => closeGracefully(server, graceMs) };
}
