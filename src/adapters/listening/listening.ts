import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type AddressInfo, type Socket } from 'node:net';

/** What node:http calls for each request. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Listens on `host:port` (port 0 picks a free one); resolves with `http://host:port` as bound, rejects if it cannot. */
export async function listen(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port: bound, family } = server.address() as AddressInfo;
  return `http://${family === 'IPv6' ? `[${address}]` : address}:${bound}`;
}

/**
 * Stops accepting, lets requests in flight finish (at most `graceMs`), then resolves. Node's own
 * close would drop every idle keep-alive connection at once, where a client may be sending its next
 * request that very moment (it meets a reset); here a connection is dropped once `idle` names it,
 * and the rest when the grace period ends.
 */
export async function closeGracefully(server: Server, graceMs: number, idle: () => Iterable<Socket>): Promise<void> {
  // The net server's close: stops accepting, and leaves the open connections to the sweep below.
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  const sweep = setInterval(() => {
    for (const socket of idle()) socket.destroy();
  }, 50);
  const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearInterval(sweep);
  clearTimeout(deadline);
  // Node's close, now that nothing is left to drop: it stops the server's timer of connection deadlines.
  server.close();
}

/**
 * Stops reading. A 'data' listener takes the socket back from Node's HTTP parser, so that pausing
 * really stops it; done on the next tick, as the parser would ignore it in the middle of a read.
 */
export function stopReading(socket: Socket): void {
  process.nextTick(() => {
    socket.on('data', () => undefined);
    socket.pause();
  });
}
