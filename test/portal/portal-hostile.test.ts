import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { MAX_IN_FLIGHT_PER_CONNECTION, OVERFLOWS_PER_PENALTY_WINDOW } from '../../src/adapters/listening/connection-guard.js';
import { PORTAL_CONNECTIONS_PER_ADDRESS } from '../../src/adapters/portal/portal-server.js';
import { answersWith, exchange, hugeBody } from '../support/hostile-clients.js';
import { startTestPortal, type TestPortal } from '../support/portal-server.js';
import { memoryPortalWorld } from '../support/portal-world.js';

describe('the partner portal\'s listener against hostile clients', function () {
  this.timeout(30_000);
  let portal: TestPortal;
  let host: string;
  before(async function () {
    portal = await startTestPortal(await memoryPortalWorld(), { publicUrl: 'https://portal.example.com' });
    host = new URL(portal.url).host;
  });
  after(async function () {
    await portal.close();
  });
  const login = (): string => `GET /portal/login HTTP/1.1\r\nHost: ${host}\r\n\r\n`;

  it(`refuses a connection past ${PORTAL_CONNECTIONS_PER_ADDRESS} from one address with a plain-text 503, and serves another address`, async function () {
    const { hostname, port } = new URL(portal.url);
    const held = await Promise.all(Array.from({ length: PORTAL_CONNECTIONS_PER_ADDRESS }, () => new Promise<Socket>((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port), localAddress: '127.0.2.1' }, () => resolve(socket));
      socket.on('error', reject);
    })));
    try {
      await new Promise((r) => setTimeout(r, 100));
      const refused = await exchange(portal.url, login(), { localAddress: '127.0.2.1' });
      expect(refused.data).to.match(/^HTTP\/1\.1 503 /);
      expect(refused.data).to.include('Content-Type: text/plain; charset=utf-8');
      expect(refused.data).to.include(`Too many open connections from your address (at most ${PORTAL_CONNECTIONS_PER_ADDRESS})`);
      expect(refused.closedByServer).to.equal(true);
      expect(answersWith((await exchange(portal.url, login(), { localAddress: '127.0.2.2', waitMs: 500 })).data, 200)).to.equal(1);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });

  it(`closes a connection pipelining past ${MAX_IN_FLIGHT_PER_CONNECTION} requests, and refuses its address 429 after ${OVERFLOWS_PER_PENALTY_WINDOW} such`, async function () {
    const flood = login().repeat(2_000);
    for (let i = 0; i < OVERFLOWS_PER_PENALTY_WINDOW; i += 1) {
      const overflowing = await exchange(portal.url, flood, { localAddress: '127.0.2.3' });
      expect(overflowing.closedByServer).to.equal(true);
      expect(answersWith(overflowing.data, 200)).to.be.below(MAX_IN_FLIGHT_PER_CONNECTION + 1);
    }
    const refused = await exchange(portal.url, flood, { localAddress: '127.0.2.3' });
    expect(refused.data).to.match(/^HTTP\/1\.1 429 /);
    expect(refused.data).to.match(/Retry-After: \d+/);
    expect(answersWith(refused.data, 200)).to.equal(0);
    expect(answersWith((await exchange(portal.url, login(), { localAddress: '127.0.2.4', waitMs: 500 })).data, 200)).to.equal(1);
  });

  it('ends a connection declaring a 10 GB body once it is answered, having read next to nothing after the answer', async function () {
    const { port } = new URL(portal.url);
    for (const path of ['/portal/nothing', '/portal/login']) {
      const outcome = await hugeBody({ host: '127.0.0.1', port: Number(port), path, hostHeader: host, declaredBytes: 10_000_000_000, forMs: 10_000 });
      process.stdout.write(`      POST ${path} declaring 10 GB: ${outcome.status}, ended ${outcome.closedAfterAnswerMs} ms after the answer, ${outcome.bytesAfterAnswer} bytes sent after it\n`);
      expect(outcome.status).to.be.oneOf([404, 413]);
      expect(outcome.closedAfterAnswerMs).to.not.equal(null);
      expect(outcome.bytesAfterAnswer).to.be.below(64 * 1024 * 1024);
    }
  });

  it('refuses a request with two Host headers with 400', async function () {
    const { data, closedByServer } = await exchange(portal.url, `GET /portal/login HTTP/1.1\r\nHost: ${host}\r\nHost: evil.example\r\n\r\n`);
    expect(data).to.match(/^HTTP\/1\.1 400 /);
    expect(data).to.include('more than one Host header');
    expect(closedByServer).to.equal(true);
  });

  it('answers its loopback names, IP literals and its public name, and 421 to any other name', async function () {
    const port = new URL(portal.url).port;
    for (const name of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `[::1]:${port}`, '192.0.2.7', 'portal.example.com', 'Portal.Example.COM:443']) {
      const { data } = await exchange(portal.url, `GET /portal/login HTTP/1.1\r\nHost: ${name}\r\nConnection: close\r\n\r\n`);
      expect(data, name).to.match(/^HTTP\/1\.1 200 /);
    }
    const { data } = await exchange(portal.url, 'GET /portal/login HTTP/1.0\r\n\r\n');
    expect(data, 'HTTP/1.0 without Host').to.match(/^HTTP\/1\.1 200 /);
    for (const name of ['evil.example', `rebind.evil.example:${port}`, 'portal.example.com.evil.example', 'localhost.evil.example']) {
      const { data, closedByServer } = await exchange(portal.url, `GET /portal/login HTTP/1.1\r\nHost: ${name}\r\n\r\n`);
      expect(data, name).to.match(/^HTTP\/1\.1 421 /);
      expect(data).to.include('This server does not answer to that host name.');
      expect(closedByServer).to.equal(true);
    }
  });
});
