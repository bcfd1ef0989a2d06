import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

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

/** Stops accepting, lets requests in flight finish (at most `graceMs`), then resolves. */
export async function closeGracefully(server: Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive sockets become idle as their last response ends; close each as soon as it does.
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearInterval(sweep);
  clearTimeout(deadline);
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
