import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { HttpWebhookSender, MAX_EXCERPT_BYTES, retryAfterSeconds, type HttpWebhookSenderOptions } from '../../src/adapters/webhooks/http-webhook-sender.js';

interface Received {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A receiver on loopback that records what reaches it and answers as told. */
async function receiver(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; received: Received[]; connections: () => number; close: () => Promise<void> }> {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      answer(req, res);
    });
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    connections: () => connections,
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

const ANY_ADDRESS = (): boolean => true;
const sender = (options: Partial<HttpWebhookSenderOptions> = {}): HttpWebhookSender =>
  new HttpWebhookSender({ timeoutMs: 1_000, allowsAddress: ANY_ADDRESS, allowHttp: true, ...options });
const ATTEMPT = {
  headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': '1764064800', 'webhook-signature': 'v1,abc=', 'Content-Type': 'application/json' },
  body: '{"type":"webhook.test","timestamp":"2026-11-25T10:00:00Z","data":{"endpoint_id":"ep_1"}}',
  subject: { messageId: 'msg_1', type: 'webhook.test', endpointId: 'ep_1', partnerId: 'acme', attempt: 1, traceparent: null },
} as const;

describe('webhook delivery over HTTP (HttpWebhookSender)', function () {
  this.timeout(15_000);
  const open: { close: () => Promise<void> }[] = [];
  afterEach(async function () {
    for (const server of open.splice(0)) await server.close();
  });
  const start = async (answer: (req: IncomingMessage, res: ServerResponse) => void): ReturnType<typeof receiver> => {
    const server = await receiver(answer);
    open.push(server);
    return server;
  };

  it('POSTs the exact body with the signature headers, and a 2xx delivers', async function () {
    const server = await start((_req, res) => res.writeHead(204).end());
    const outcome = await sender().send({ url: `${server.url}/hooks?team=1`, ...ATTEMPT });
    expect(outcome).to.include({ status: 204, error: null, retryAfterSeconds: null, excerpt: '' });
    expect(server.received).to.have.length(1);
    const [got] = server.received;
    expect(got!.method).to.equal('POST');
    expect(got!.url).to.equal('/hooks?team=1');
    expect(got!.body).to.equal(ATTEMPT.body);
    expect(got!.headers).to.include({
      'webhook-id': 'msg_1', 'webhook-timestamp': '1764064800', 'webhook-signature': 'v1,abc=', 'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(ATTEMPT.body)),
    });
  });

  it('keeps the first 1 KiB of an answer for the log, and reads no more of a 10 MB one', async function () {
    let finished = false;
    const server = await start((_req, res) => {
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let left = 10 * 1024 * 1024;
      const more = (): void => {
        while (left > 0) {
          left -= chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end(() => {
          finished = true;
        });
      };
      res.on('close', () => {
        left = 0;
      });
      more();
    });
    const outcome = await sender().send({ url: server.url, ...ATTEMPT });
    expect(outcome.status).to.equal(500);
    expect(outcome.excerpt).to.equal('x'.repeat(MAX_EXCERPT_BYTES));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(finished, 'the receiver could send its whole answer').to.equal(false);
  });

  it('fails with timeout when the receiver never answers, within the attempt\'s time', async function () {
    const server = await start(() => undefined);
    const outcome = await sender({ timeoutMs: 500 }).send({ url: server.url, ...ATTEMPT });
    expect(outcome).to.include({ status: null, error: 'timeout' });
    expect(outcome.durationMs).to.be.at.least(450).and.below(5_000);
  });

  it('fails with timeout when the answer\'s head trickles in byte by byte', async function () {
    const server = await start((req) => {
      const head = 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n';
      let sent = 0;
      const timer = setInterval(() => {
        if (sent >= head.length || req.socket.destroyed) return clearInterval(timer);
        req.socket.write(head[sent]!);
        sent += 1;
      }, 100);
    });
    const outcome = await sender({ timeoutMs: 800 }).send({ url: server.url, ...ATTEMPT });
    expect(outcome).to.include({ status: null, error: 'timeout' });
  });

  it('keeps a 2xx whose body trickles past the deadline: the answer came in time', async function () {
    const server = await start((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('o');
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write('k')), 100);
    });
    const outcome = await sender({ timeoutMs: 500 }).send({ url: server.url, ...ATTEMPT });
    expect(outcome.status).to.equal(200);
    expect(outcome.error).to.equal(null);
    expect(outcome.excerpt).to.match(/^ok+$/);
  });

  it('never follows a redirect: a 3xx is the answer, and its Location gets nothing', async function () {
    const elsewhere = await start((_req, res) => res.writeHead(204).end());
    const server = await start((_req, res) => res.writeHead(302, { Location: `${elsewhere.url}/` }).end());
    const metadata = await start((_req, res) => res.writeHead(307, { Location: 'http://169.254.169.254/latest/meta-data/' }).end());
    expect(await sender().send({ url: server.url, ...ATTEMPT })).to.include({ status: 302, error: null });
    expect(await sender().send({ url: metadata.url, ...ATTEMPT })).to.include({ status: 307, error: null });
    expect(elsewhere.connections()).to.equal(0);
  });

  it('reads Retry-After in seconds or as a date', async function () {
    const server = await start((_req, res) => res.writeHead(429, { 'Retry-After': '86400' }).end());
    expect(await sender().send({ url: server.url, ...ATTEMPT })).to.include({ status: 429, retryAfterSeconds: 86_400 });
    const now = Date.parse('2026-11-25T10:00:00Z');
    expect(retryAfterSeconds('Wed, 25 Nov 2026 10:02:00 GMT', now)).to.equal(120);
    expect(retryAfterSeconds('Wed, 25 Nov 2026 09:00:00 GMT', now)).to.equal(0);
    expect(retryAfterSeconds('soon', now)).to.equal(null);
    expect(retryAfterSeconds('-5', now)).to.equal(null);
  });

  it('refuses a name that resolves to a refused address, and connects to nothing', async function () {
    const server = await start((_req, res) => res.writeHead(204).end());
    const port = new URL(server.url).port;
    const loopbackRefused = sender({ allowsAddress: (address) => address !== '127.0.0.1', resolve: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]) });
    expect(await loopbackRefused.send({ url: `http://hooks.partner.test:${port}/`, ...ATTEMPT })).to.include({ status: null, error: 'refused_address' });
    expect(await loopbackRefused.send({ url: `http://127.0.0.1:${port}/`, ...ATTEMPT })).to.include({ status: null, error: 'refused_address' });
    // One refused address among several is enough to refuse: the client could be steered to it.
    const mixed = sender({ allowsAddress: (address) => address !== '10.0.0.7', resolve: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }, { address: '10.0.0.7', family: 4 }]) });
    expect(await mixed.send({ url: `http://hooks.partner.test:${port}/`, ...ATTEMPT })).to.include({ error: 'refused_address' });
    expect(server.connections()).to.equal(0);
  });

  it('connects to the address it checked and never asks DNS again (no rebinding)', async function () {
    const server = await start((_req, res) => res.writeHead(204).end());
    const port = new URL(server.url).port;
    let asked = 0;
    // The first answer is the checked one; any later answer would point elsewhere.
    const rebinding = sender({ resolve: () => Promise.resolve(asked++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '192.0.2.1', family: 4 }]) });
    expect(await rebinding.send({ url: `http://hooks.partner.test:${port}/in`, ...ATTEMPT })).to.include({ status: 204, error: null });
    expect(asked).to.equal(1);
    expect(server.received[0]!.headers.host).to.equal(`hooks.partner.test:${port}`);
  });

  it('says why no answer came: a name that does not resolve, a closed port, a URL it may not call', async function () {
    const unresolvable = sender({ resolve: () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })) });
    expect(await unresolvable.send({ url: 'https://nowhere.partner.test/', ...ATTEMPT })).to.include({ error: 'name_not_resolved' });
    const closed = await start(() => undefined);
    const port = new URL(closed.url).port;
    await closed.close();
    expect(await sender().send({ url: `http://127.0.0.1:${port}/`, ...ATTEMPT })).to.include({ status: null, error: 'connection_failed' });
    expect(await sender({ allowHttp: false }).send({ url: `http://127.0.0.1:${port}/`, ...ATTEMPT })).to.include({ error: 'invalid_url' });
    expect(await sender().send({ url: `http://user:pass@127.0.0.1:${port}/`, ...ATTEMPT })).to.include({ error: 'invalid_url' });
    expect(await sender().send({ url: 'not a url', ...ATTEMPT })).to.include({ error: 'invalid_url' });
  });

  it('times a slow name resolution out like a slow receiver', async function () {
    const hanging = sender({ timeoutMs: 300, resolve: () => new Promise(() => undefined) });
    expect(await hanging.send({ url: 'https://slow-dns.partner.test/', ...ATTEMPT })).to.include({ status: null, error: 'timeout' });
  });

  it('checks the receiver\'s certificate against the URL\'s name over the pinned connection: a self-signed one gets nothing', async function () {
    const dir = mkdtempSync(join(tmpdir(), 'pcat-tls-'));
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=hooks.partner.test',
      '-addext', 'subjectAltName=DNS:hooks.partner.test', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')]);
    expect(made.status, made.stderr.toString()).to.equal(0);
    let requests = 0;
    let servername: string | undefined;
    const server = createTlsServer({
      key: readFileSync(join(dir, 'key.pem')),
      cert: readFileSync(join(dir, 'cert.pem')),
      SNICallback: (name, done) => {
        servername = name;
        done(null);
      },
    }, (_req, res) => {
      requests += 1;
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    open.push({ close: () => new Promise((resolve) => server.close(() => resolve())) });
    const { port } = server.address() as AddressInfo;
    server.on('tlsClientError', () => undefined);
    const pinned = sender({ resolve: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]) });
    expect(await pinned.send({ url: `https://hooks.partner.test:${port}/`, ...ATTEMPT })).to.include({ status: null, error: 'connection_failed' });
    expect(requests).to.equal(0);
    expect(servername, 'the name sent for TLS').to.equal('hooks.partner.test');
  });
});
