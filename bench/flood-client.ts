/**
 * A flood of made-up keys: `connections` keep-alive HTTP/1.1 connections from `localAddress`, each
 * asking for one path again the moment it is answered, every time with a fresh random well-formed
 * key. Written on raw sockets, as node:http's client would be the bottleneck; a connection the server
 * closes is opened again. Runs as its own process, so it can be pinned to the load core, and prints
 * its counts as JSON when the time is up.
 *
 * Usage: flood-client.ts <host> <port> <path> <connections> <seconds> <local address>
 */
import { connect } from 'node:net';
import { madeUpKey } from './made-up-key.js';

const [host, port, path, connections, seconds, localAddress] = process.argv.slice(2) as [string, string, string, string, string, string];
const REQUEST_TIMEOUT_MS = 5_000;
/** Before opening again a connection that got no answer at all, so a refusing server does not make a busy loop. */
const RETRY_PAUSE_MS = 100;
const HEAD_END = Buffer.from('\r\n\r\n');
const LAST_CHUNK = Buffer.from('\r\n0\r\n\r\n');

const counts = { statuses: {} as Record<string, number>, failures: 0, reopened: 0 };
const started = performance.now();
const deadline = started + Number(seconds) * 1000;

/** The length of the first whole answer in `buf`, with its status; null while it is incomplete. */
function firstAnswer(buf: Buffer): { status: string; length: number } | null {
  const headEnd = buf.indexOf(HEAD_END);
  if (headEnd < 0) return null;
  const head = buf.subarray(0, headEnd).toString('latin1');
  const status = head.slice(9, 12);
  const contentLength = /\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1];
  if (contentLength !== undefined) {
    const length = headEnd + 4 + Number(contentLength);
    return buf.length >= length ? { status, length } : null;
  }
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    const end = buf.indexOf(LAST_CHUNK, headEnd + 2);
    return end < 0 ? null : { status, length: end + LAST_CHUNK.length };
  }
  return { status, length: headEnd + 4 };
}

/** One connection's life; resolves at the deadline. */
function connection(): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(port), localAddress });
    let buf: Buffer = Buffer.alloc(0);
    let answers = 0;
    let timer: NodeJS.Timeout | undefined;
    const ask = (): void => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${madeUpKey()}\r\n\r\n`);
      timer = setTimeout(() => {
        counts.failures += 1;
        socket.destroy();
      }, REQUEST_TIMEOUT_MS);
    };
    socket.on('connect', ask);
    socket.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      const answer = firstAnswer(buf);
      if (answer === null) return;
      clearTimeout(timer);
      answers += 1;
      counts.statuses[answer.status] = (counts.statuses[answer.status] ?? 0) + 1;
      buf = buf.subarray(answer.length);
      if (performance.now() < deadline) ask();
      else socket.destroy();
    });
    socket.on('error', () => {
      counts.failures += 1;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const now = performance.now();
      if (now >= deadline) {
        resolve();
        return;
      }
      counts.reopened += 1;
      setTimeout(() => void connection().then(resolve), answers === 0 ? RETRY_PAUSE_MS : 0);
    });
  });
}

await Promise.all(Array.from({ length: Number(connections) }, () => connection()));
process.stdout.write(JSON.stringify({ ...counts, elapsedS: (performance.now() - started) / 1000 }));
