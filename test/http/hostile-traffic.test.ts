import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { MemoryAuthFailureGuard } from '../../src/adapters/memory/memory-auth-failure-guard.js';
import { clientAddressResolver, trustedProxies } from '../../src/adapters/listening/client-address.js';
import { RAW_ANSWER_HEADERS } from '../../src/adapters/listening/guarded-server.js';
import { MAX_IN_FLIGHT_PER_CONNECTION, OVERFLOWS_PER_PENALTY_WINDOW, PENALTY_WINDOW_MS } from '../../src/adapters/listening/connection-guard.js';
import type { ApiKeyStore } from '../../src/application/access/api-key-store.js';
import { systemClock } from '../../src/application/common/clock.js';
import { generateApiKey } from '../../src/domain/api-key.js';
import { KEYS } from '../fixtures/catalog-fixture.js';
import { answersWith, exchange } from '../support/hostile-clients.js';
import { STORAGES } from '../support/storages.js';
import { memoryInfrastructure, startTestServer, type TestServer } from '../support/test-server.js';

const TENT = '/api/v1/public/sku/TENT-2P';
const ATTACKER = '127.0.0.2';

describe('HTTP: hostile clients', function () {
  this.timeout(30_000);

  describe('a client that pipelines without reading', function () {
    let server: TestServer;
    before(async function () {
      server = await startTestServer(await memoryInfrastructure());
    });
    after(async function () {
      await server.close();
    });

    it(`answers up to ${MAX_IN_FLIGHT_PER_CONNECTION} pipelined requests and keeps the connection`, async function () {
      const { data, closedByServer } = await exchange(server.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(MAX_IN_FLIGHT_PER_CONNECTION), { waitMs: 1_000 });
      expect(answersWith(data, 200)).to.equal(MAX_IN_FLIGHT_PER_CONNECTION);
      expect(closedByServer).to.equal(false);
    });

    for (const pipelined of [MAX_IN_FLIGHT_PER_CONNECTION + 1, 5_000]) {
      it(`closes a connection with ${pipelined} requests pipelined at once, and keeps serving others`, async function () {
        const { data, closedByServer } = await exchange(server.url, `GET ${TENT} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(pipelined));
        expect(closedByServer).to.equal(true);
        expect(answersWith(data, 401)).to.be.below(MAX_IN_FLIGHT_PER_CONNECTION + 1);
        const after = await server.request('/healthz');
        expect(after.status).to.equal(200);
      });
    }

    it('counts the connection as overflowing in the refusal summary', async function () {
      this.timeout(20_000);
      await exchange(server.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(100));
      const deadline = Date.now() + 12_000;
      while (!server.logs.some((l) => l.includes('connections refused')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      const line = JSON.parse(server.logs.find((l) => l.includes('connections refused'))!) as { refused: Record<string, number> };
      expect(line.refused.pipeline_overflow).to.be.at.least(1);
    });
  });

  describe('an address whose connections keep overflowing', function () {
    let server: TestServer;
    before(async function () {
      server = await startTestServer(await memoryInfrastructure());
    });
    after(async function () {
      await server.close();
    });

    it(`has its connections refused with a JSON 429 after ${OVERFLOWS_PER_PENALTY_WINDOW} overflows, other addresses served`, async function () {
      const flood = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(1_000);
      for (let i = 0; i < OVERFLOWS_PER_PENALTY_WINDOW; i += 1) {
        const overflowing = await exchange(server.url, flood, { localAddress: '127.0.0.7' });
        expect(overflowing.closedByServer).to.equal(true);
        expect(overflowing.data).to.not.include('HTTP/1.1 429');
      }
      const refused = await exchange(server.url, flood, { localAddress: '127.0.0.7' });
      expect(refused.data).to.match(/^HTTP\/1\.1 429 /);
      expect(answersWith(refused.data, 200)).to.equal(0);
      const retryAfter = Number(/Retry-After: (\d+)/.exec(refused.data)?.[1]);
      expect(retryAfter).to.be.within(55, PENALTY_WINDOW_MS / 1000);
      const body = JSON.parse(refused.data.slice(refused.data.indexOf('\r\n\r\n') + 4)) as { error: string; message: string };
      expect(body).to.deep.equal({
        error: 'too_many_pipelined_requests',
        message: `Your address pipelined more than 16 requests without reading the answers; its connections are refused for ${retryAfter} more seconds.`,
      });
      expect((await server.request('/healthz', { localAddress: '127.0.0.8' })).status).to.equal(200);
    });
  });

  describe('connection limits', function () {
    let server: TestServer;
    before(async function () {
      server = await startTestServer((await memoryInfrastructure()), {
        limits: { maxConnections: 6, maxConnectionsPerAddress: 3, trustedProxies: trustedProxies(['127.0.0.3']) },
      });
    });
    after(async function () {
      await server.close();
    });

    /** Opens `count` idle connections from `localAddress` and waits until the server has seen them. */
    async function hold(count: number, localAddress: string): Promise<Socket[]> {
      const { hostname, port } = new URL(server.url);
      const sockets = await Promise.all(Array.from({ length: count }, () => new Promise<Socket>((resolve, reject) => {
        const socket = connect({ host: hostname, port: Number(port), localAddress }, () => resolve(socket));
        socket.on('error', reject);
      })));
      await new Promise((r) => setTimeout(r, 100));
      return sockets;
    }

    it('refuses a connection past the per-address limit with a JSON 503, and serves other addresses', async function () {
      const held = await hold(3, ATTACKER);
      try {
        const refused = await exchange(server.url, `GET ${TENT} HTTP/1.1\r\nHost: x\r\n\r\n`, { localAddress: ATTACKER });
        expect(refused.data).to.match(/^HTTP\/1\.1 503 /);
        expect(refused.data).to.include('Retry-After: 1');
        const body = JSON.parse(refused.data.slice(refused.data.indexOf('\r\n\r\n') + 4)) as { error: string; message: string };
        expect(body.error).to.equal('too_many_connections');
        expect(body.message).to.include('at most 3');
        expect((await server.request(TENT, { headers: { 'X-API-Key': KEYS.acme } })).status).to.equal(200);
      } finally {
        for (const socket of held) socket.destroy();
      }
    });

    it('does not limit a trusted proxy per address, but still limits connections overall', async function () {
      // Twice the per-address limit from the proxy, which is also the limit overall.
      const held = await hold(6, '127.0.0.3');
      try {
        const refused = await exchange(server.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', { localAddress: '127.0.0.4' });
        expect(refused.data).to.match(/^HTTP\/1\.1 503 /);
        expect(refused.data).to.include('too many open connections');
      } finally {
        for (const socket of held) socket.destroy();
      }
      await new Promise((r) => setTimeout(r, 100));
      expect((await server.request('/healthz', { localAddress: '127.0.0.4' })).status).to.equal(200);
    });

    it('sums refusals up in one log line rather than one per connection', async function () {
      this.timeout(20_000);
      const held = await hold(3, ATTACKER);
      try {
        for (let i = 0; i < 5; i += 1) await exchange(server.url, '', { localAddress: ATTACKER, waitMs: 500 });
      } finally {
        for (const socket of held) socket.destroy();
      }
      const deadline = Date.now() + 12_000;
      while (!server.logs.some((l) => l.includes('connections refused')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      const summaries = server.logs.filter((l) => l.includes('connections refused'));
      expect(summaries).to.have.length.greaterThan(0);
      expect(summaries.length).to.be.below(3);
      const line = JSON.parse(summaries[0]!) as { refused: Record<string, number> };
      expect(line.refused.address_full).to.be.at.least(5);
    });
  });

  describe('a request with two Host headers', function () {
    let server: TestServer;
    before(async function () {
      server = await startTestServer(await memoryInfrastructure());
    });
    after(async function () {
      await server.close();
    });

    it('is refused with a JSON 400 bad_request and its connection closed, whichever name comes first', async function () {
      for (const hosts of ['Host: x\r\nHost: y', 'Host: x\r\nhost: x', 'HOST: x\r\nhOsT: y']) {
        const { data, closedByServer } = await exchange(server.url, `GET /healthz HTTP/1.1\r\n${hosts}\r\n\r\n`);
        expect(data).to.match(/^HTTP\/1\.1 400 /);
        expect(JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4))).to.deep.equal({ error: 'bad_request', message: 'Malformed HTTP request: more than one Host header.' });
        expect(closedByServer).to.equal(true);
      }
    });

    it('carries the security headers every answer of the listener carries, and is never stored', async function () {
      const { data } = await exchange(server.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n');
      const head = data.slice(0, data.indexOf('\r\n\r\n')).split('\r\n').slice(1);
      expect(head).to.include.members([...RAW_ANSWER_HEADERS]);
      expect(head.find((line) => line.toLowerCase().startsWith('cache-control:'))).to.equal('Cache-Control: no-store');
    });
  });

  describe('a request that does not arrive in time', function () {
    let server: TestServer;
    before(async function () {
      server = await startTestServer((await memoryInfrastructure()), { timeouts: { headersMs: 500, requestMs: 1_000 } });
    });
    after(async function () {
      await server.close();
    });

    for (const [name, text] of [['headers never finished', 'GET /healthz HTTP/1.1\r\nHost: x\r\n'], ['nothing sent at all', '']] as const) {
      it(`answers 408 request_timeout in JSON and closes: ${name}`, async function () {
        const started = Date.now();
        const { data, closedByServer } = await exchange(server.url, text, { waitMs: 5_000 });
        expect(data).to.match(/^HTTP\/1\.1 408 /);
        expect(JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4))).to.deep.equal({
          error: 'request_timeout',
          message: 'The request did not arrive in time: its headers within 0.5 s, the whole request within 1 s.',
        });
        expect(closedByServer).to.equal(true);
        expect(Date.now() - started).to.be.below(4_000);
      });
    }
  });

  for (const [storageName, setup] of STORAGES) {
    describe(`made-up keys flooding from one address, on ${storageName} storage`, function () {
      const storage = setup();
      const LIMIT = 10;
      let server: TestServer;
      let reads = 0;
      before(async function () {
        const opened = await storage.open();
        const inner = opened.infrastructure.keys;
        const keys: ApiKeyStore = { findActiveByHash: (hash) => { reads += 1; return inner.findActiveByHash(hash); }, isStillActive: (p) => inner.isStillActive(p) };
        server = await startTestServer({
          ...opened.infrastructure,
          keys,
          authFailures: new MemoryAuthFailureGuard({ failuresPerWindow: LIMIT, clock: systemClock }),
        });
      });
      after(async function () {
        await server.close();
      });

      it('holds the address back after its budget, without a storage read, while another address is served', async function () {
        // The partner's key authenticated from the attacker's address before the flood: it stays welcome there.
        expect((await server.request(TENT, { headers: { 'X-API-Key': KEYS.globex }, localAddress: ATTACKER })).status).to.equal(404);
        const readsBefore = reads;
        const statuses: number[] = [];
        let legitimate = 0;
        const flood = async (): Promise<void> => {
          for (let i = 0; i < 8; i += 1) {
            const sent = Date.now();
            const response = await server.request(TENT, { headers: { Authorization: `Bearer ${generateApiKey()}` }, localAddress: ATTACKER });
            statuses.push(response.status);
            if (response.status === 429) {
              // Held back answers come late, which is what slows a flood down.
              expect(Date.now() - sent).to.be.at.least(900);
              expect(Number(response.headers['retry-after'])).to.be.within(1, 60);
              expect((response.json() as { message: string }).message).to.match(/^Too many failed authentications from your address: retry in \d+ seconds?\.$/);
              expect(response.headers['ratelimit-limit']).to.equal(undefined);
            }
          }
        };
        const partner = async (): Promise<void> => {
          for (let i = 0; i < 40; i += 1) {
            const response = await server.request(TENT, { headers: { 'X-API-Key': KEYS.acme } });
            expect(response.status).to.equal(200);
            legitimate += 1;
          }
        };
        await Promise.all([flood(), flood(), flood(), partner()]);
        // Three flooders in parallel: at most two more can be checked while the budget's last failure is.
        const refused = statuses.filter((s) => s === 401).length;
        expect(refused).to.be.within(LIMIT, LIMIT + 2);
        expect(statuses.filter((s) => s === 429)).to.have.length(24 - refused);
        expect(legitimate).to.equal(40);
        // Only the failures within the budget and the partner's own requests reached the key store.
        expect(reads - readsBefore).to.equal(refused + 40);
        // A request without any key from the held-back address is held back too.
        expect((await server.request(TENT, { localAddress: ATTACKER })).status).to.equal(429);
        // A key that authenticated recently is still served from the held-back address.
        expect((await server.request(TENT, { headers: { 'X-API-Key': KEYS.globex }, localAddress: ATTACKER })).status).to.equal(404);
      });
    });
  }

  describe('behind a trusted proxy', function () {
    let server: TestServer;
    before(async function () {
      const infrastructure = { ...await memoryInfrastructure(), authFailures: new MemoryAuthFailureGuard({ failuresPerWindow: 3, clock: systemClock }) };
      server = await startTestServer(infrastructure, { clientAddress: clientAddressResolver(trustedProxies(['127.0.0.5'])) });
    });
    after(async function () {
      await server.close();
    });

    const badKey = { Authorization: `Bearer pcat_live_${'x'.repeat(40)}` };

    it('counts failures against the client the proxy forwarded for, not against the proxy', async function () {
      const viaProxy = (client: string, headers: Record<string, string> = badKey) =>
        server.request(TENT, { headers: { ...headers, 'X-Forwarded-For': `${client}, 127.0.0.5` }, localAddress: '127.0.0.5' });
      for (let i = 0; i < 3; i += 1) expect((await viaProxy('198.51.100.7')).status).to.equal(401);
      expect((await viaProxy('198.51.100.7')).status).to.equal(429);
      expect((await viaProxy('198.51.100.8')).status).to.equal(401);
      expect((await viaProxy('198.51.100.9', { 'X-API-Key': KEYS.acme })).status).to.equal(200);
    });

    it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async function () {
      const spoofing = (client: string) =>
        server.request(TENT, { headers: { ...badKey, 'X-Forwarded-For': client }, localAddress: '127.0.0.6' });
      for (let i = 0; i < 3; i += 1) expect((await spoofing(`203.0.113.${i}`)).status).to.equal(401);
      expect((await spoofing('203.0.113.99')).status).to.equal(429);
    });
  });
});
