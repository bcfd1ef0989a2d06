import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { freePort } from './redis.js';

/** What a crowd of idle connections achieved. */
export interface IdleCrowd {
  /** Connections attempted, first and reopened. */
  readonly opened: number;
  readonly connected: number;
  /** Connections the server ended while the crowd held them. */
  readonly closedByServer: number;
  /** The most open at one moment. */
  readonly mostOpen: number;
  /** Ends the crowd: every socket closed. */
  stop(): void;
}

/**
 * Opens `count` connections spread over `addresses` that send nothing, and reopens each one the
 * server closes after `reopenAfterMs`, until stopped: the crowd presses on whatever the server does.
 */
export function idleCrowd(options: { host: string; port: number; addresses: readonly string[]; count: number; reopenAfterMs: number }): IdleCrowd {
  const live = new Set<Socket>();
  const counts = { opened: 0, connected: 0, closedByServer: 0, mostOpen: 0 };
  let stopping = false;
  const open = (address: string): void => {
    if (stopping) return;
    counts.opened += 1;
    const socket = connect({ host: options.host, port: options.port, localAddress: address });
    live.add(socket);
    let connected = false;
    socket.on('connect', () => {
      connected = true;
      counts.connected += 1;
      counts.mostOpen = Math.max(counts.mostOpen, live.size);
    });
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      live.delete(socket);
      if (stopping) return;
      if (connected) counts.closedByServer += 1;
      setTimeout(() => open(address), options.reopenAfterMs);
    });
  };
  for (let i = 0; i < options.count; i += 1) open(options.addresses[i % options.addresses.length]!);
  return {
    get opened() { return counts.opened; },
    get connected() { return counts.connected; },
    get closedByServer() { return counts.closedByServer; },
    get mostOpen() { return counts.mostOpen; },
    stop: () => {
      stopping = true;
      for (const socket of live) socket.destroy();
    },
  };
}

/** What became of a request declaring a huge body, sent as fast as the server reads it. */
export interface HugeBodyOutcome {
  /** The status line's code, or null if no answer came. */
  readonly status: number | null;
  /** From the answer's first byte to the server's end of the connection, or null if it had not ended by the deadline. */
  readonly closedAfterAnswerMs: number | null;
  /** Body bytes the server took after it answered. */
  readonly bytesAfterAnswer: number;
}

/** POSTs to `path` declaring `declaredBytes` and keeps sending until the server ends the connection or `forMs` pass. */
export function hugeBody(options: { host: string; port: number; path: string; hostHeader: string; declaredBytes: number; forMs: number }): Promise<HugeBodyOutcome> {
  return new Promise((resolve) => {
    const socket = connect({ host: options.host, port: options.port });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let answeredAt: number | null = null;
    let status: number | null = null;
    let sentAfterAnswer = 0;
    let finished = false;
    const finish = (closed: boolean): void => {
      if (finished) return;
      finished = true;
      clearTimeout(deadline);
      socket.destroy();
      resolve({ status, closedAfterAnswerMs: closed && answeredAt !== null ? Math.round(performance.now() - answeredAt) : null, bytesAfterAnswer: sentAfterAnswer });
    };
    const deadline = setTimeout(() => finish(false), options.forMs);
    const pump = (): void => {
      while (!finished && !socket.destroyed) {
        if (answeredAt !== null) sentAfterAnswer += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.on('connect', () => {
      socket.write(`POST ${options.path} HTTP/1.1\r\nHost: ${options.hostHeader}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${options.declaredBytes}\r\n\r\n`);
      pump();
    });
    socket.on('data', (data: Buffer) => {
      if (answeredAt !== null) return;
      answeredAt = performance.now();
      status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data.toString('latin1'))?.[1] ?? 0);
    });
    // The server's end of the connection (its FIN) ends it for a client, which then stops sending.
    socket.on('end', () => finish(true));
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
  });
}

/** One request's outcome: its status and how long it took, or how it failed. */
export type Answered = { readonly status: number; readonly ms: number } | { readonly failure: string; readonly ms: number };

/** A GET on a fresh connection, given up after `timeoutMs`. */
export function getOnce(url: string, headers: Record<string, string>, timeoutMs: number, localAddress?: string): Promise<Answered> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(url, { agent: false, headers, ...(localAddress === undefined ? {} : { localAddress }) }, (res) => {
      res.resume();
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, ms: Math.round(performance.now() - started) });
      });
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ failure: 'timed out', ms: Math.round(performance.now() - started) });
    }, timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ failure: error.code ?? error.message, ms: Math.round(performance.now() - started) });
    });
    req.end();
  });
}

/** The service as `npm start` runs it, from `checkout`, with at most `openFiles` descriptors (prlimit). */
export interface ServiceUnderAttack {
  readonly child: ChildProcess;
  readonly apiUrl: string;
  readonly portalUrl: string;
  /** The demo key the service printed. */
  readonly key: string;
  /** The demo admin's invitation link the service printed. */
  readonly invitation: string;
  /** Everything the service wrote to standard error and standard output so far. */
  output(): string;
  stop(): Promise<void>;
}

export async function startServiceUnderAttack(options: { checkout: string; openFiles: number; env?: Record<string, string> }): Promise<ServiceUnderAttack> {
  const [port, portalPort] = [await freePort(), await freePort()];
  const node = [process.execPath, '--import', 'tsx', join(options.checkout, 'src/main.ts')];
  const child = spawn('prlimit', [`--nofile=${options.openFiles}`, '--', ...node], {
    cwd: options.checkout,
    env: { ...process.env, PORT: String(port), PORTAL_PORT: String(portalPort), METRICS_PORT: '0', LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (data: Buffer) => { text += data.toString('utf8'); });
  child.stderr.on('data', (data: Buffer) => { text += data.toString('utf8'); });
  const deadline = Date.now() + 60_000;
  while (!/\/portal\/invite\/\S+/.test(text)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the service did not start: ${text}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    apiUrl: `http://127.0.0.1:${port}`,
    portalUrl: `http://127.0.0.1:${portalPort}`,
    key: /pcat_live_[A-Za-z0-9]+/.exec(text)![0],
    invitation: /http:\/\/\S+\/portal\/invite\/\S+/.exec(text)![0],
    output: () => text,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** The resident set of a process, in MB (Linux). */
export function rssMb(pid: number): number {
  let status = '';
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    // the process has gone
  }
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

/** A raw answer: status, headers and body text. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  readonly ms: number;
}

/** One HTTP exchange from `localAddress`, on a fresh connection. */
export function exchangeOnce(url: string, options: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string; timeoutMs?: number } = {}): Promise<RawAnswer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, {
      agent: false, method: options.method ?? 'GET', headers: options.headers ?? {}, timeout: options.timeoutMs ?? 30_000,
      ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, ms: Math.round(performance.now() - started) }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A form page's CSRF token and the cookies it set, as a browser would keep them. */
export async function openForm(url: string, localAddress?: string): Promise<{ csrf: string; cookie: string }> {
  const page = await exchangeOnce(url, localAddress === undefined ? {} : { localAddress });
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1];
  if (csrf === undefined) throw new Error(`no form at ${url}: ${page.status}`);
  const setCookies = page.headers['set-cookie'] ?? [];
  const cookie = (Array.isArray(setCookies) ? setCookies : [setCookies]).map((line) => line.split(';')[0]!).join('; ');
  return { csrf, cookie };
}

/** Posts a portal form with its token and cookies. */
export function postForm(url: string, form: { csrf: string; cookie: string }, fields: Record<string, string>, localAddress?: string): Promise<RawAnswer> {
  return exchangeOnce(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: form.cookie },
    body: new URLSearchParams({ ...fields, csrf: form.csrf }).toString(),
    ...(localAddress === undefined ? {} : { localAddress }),
  });
}

/** Writes `text` on a fresh socket and collects what comes back until the server closes it or `waitMs` passes. */
export function exchange(url: string, text: string, options: { waitMs?: number; localAddress?: string } = {}): Promise<{ data: string; closedByServer: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port), ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }) });
    let data = '';
    let closedByServer = false;
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ data, closedByServer });
    };
    const timer = setTimeout(done, options.waitMs ?? 3_000);
    socket.on('data', (chunk: Buffer) => { data += chunk.toString('latin1'); });
    socket.on('end', () => { closedByServer = true; done(); });
    socket.on('error', () => { closedByServer = true; done(); });
    socket.write(text);
  });
}

/** How many answers with `status` a raw exchange holds. */
export const answersWith = (data: string, status: number): number => data.split(`HTTP/1.1 ${status} `).length - 1;
