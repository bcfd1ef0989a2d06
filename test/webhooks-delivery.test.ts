import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { MysqlWebhookEndpoints } from '../src/adapters/mysql/mysql-webhook-endpoints.js';
import { MysqlWebhookOutbox } from '../src/adapters/mysql/mysql-webhook-outbox.js';
import { generateWebhookSecret } from '../src/domain/webhook-secret.js';
import type { CatalogChangedMessage } from '../src/domain/webhook-messages.js';
import { fixtureCatalog, retitled } from './fixtures/catalog-fixture.js';
import { cli } from './support/cli-process.js';
import { catalogDocument, importCatalog } from './support/import.js';
import { useTestDatabase } from './support/mariadb.js';
import { startService, type ServiceProcess } from './support/service-process.js';
import { startTcpProxy } from './support/tcp-proxy.js';

interface Arrival {
  readonly headers: Record<string, string>;
  readonly body: string;
}

// The service as deployed on MySQL, in processes of its own, and the operator's CLI: what a partner's
// receiver gets, verified with the official Standard Webhooks library.
describe('webhook delivery by running instances (MySQL)', function () {
  this.timeout(120_000);
  const testDb = useTestDatabase();
  let receiver: Server;
  let url: string;
  let arrivals: Arrival[];
  /** A status now, a status later, or none ever. */
  let answer: (arrival: Arrival) => number | Promise<number> | 'hang';
  let secret: string;
  let endpointId: string;
  let dir: string;
  const services: ServiceProcess[] = [];
  let env: Record<string, string>;

  const serve = async (extra: Record<string, string> = {}): Promise<ServiceProcess> => {
    const service = startService({ ...env, ...extra });
    services.push(service);
    await service.waitFor(/"msg":"listening"/, 60_000);
    return service;
  };
  const importTitle = async (title: string): Promise<void> => {
    const file = join(dir, `catalog-${Math.random().toString(16).slice(2)}.json`);
    await writeFile(file, JSON.stringify(catalogDocument(retitled(title))));
    const run = await cli(['import', file], env, 'cli:prod');
    expect(run.code, run.stderr).to.equal(0);
  };
  const until = async (done: () => boolean, timeoutMs: number): Promise<void> => {
    for (const deadline = Date.now() + timeoutMs; !done() && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 25));
  };
  /** Waits (up to 20 s) until no delivery is pending, each attempt recorded; returns how many still are. */
  const settled = async (): Promise<number> => {
    const outbox = new MysqlWebhookOutbox(testDb.db);
    for (const deadline = Date.now() + 20_000; await outbox.pendingCount() > 0 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return outbox.pendingCount();
  };
  const verified = (arrival: Arrival): CatalogChangedMessage => new Webhook(secret).verify(arrival.body, arrival.headers) as CatalogChangedMessage;

  before(async function () {
    dir = await mkdtemp(join(tmpdir(), 'pcat-webhook-delivery-'));
    receiver = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const arrival = { headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') };
        arrivals.push(arrival);
        const status = answer(arrival);
        if (typeof status === 'number') res.writeHead(status).end();
        else if (status !== 'hang') void status.then((later) => res.writeHead(later).end());
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/catalog`;
    env = { STORAGE: 'mysql', DATABASE_URL: testDb.url, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_CONCURRENCY: '4' };
    await importCatalog(testDb.db, fixtureCatalog());
    const added = await cli(['webhooks', 'add', '--partner', 'acme', '--url', url, '--json'], env, 'cli:prod');
    expect(added.code, added.stderr).to.equal(0);
    ({ id: endpointId, secret } = added.json() as { id: string; secret: string });
  });
  beforeEach(function () {
    arrivals = [];
    answer = () => 204;
  });
  afterEach(async function () {
    // A delivery its receiver got but its instance did not record yet stays claimed after a kill, and
    // would reach the next test's receiver once its claim lapses: each test ends with the outbox empty.
    const pending = await settled();
    for (const service of services.splice(0)) {
      service.kill();
      await service.exited();
    }
    expect(pending, 'deliveries still pending when the test ended').to.equal(0);
  });
  after(async function () {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  // How soon after the commit is the bench's figure (npm run bench, the webhook rows), not a test's.
  it('delivers one catalog.changed message per import, exactly once with two instances running', async function () {
    await Promise.all([serve(), serve()]);
    await importTitle('Changed for two instances');
    await until(() => arrivals.length > 0, 10_000);
    // Long enough for a second instance's duplicate to arrive, if one were coming.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(arrivals, 'exactly one attempt').to.have.length(1);
    const message = verified(arrivals[0]!);
    expect(message.type).to.equal('catalog.changed');
    expect(message.data).to.include({ changes: 1, upserted: 1, deleted: 0 });
    expect(message.data.items!.map((item) => item.sku)).to.deep.equal([fixtureCatalog().partners.find((p) => p.id === 'acme')!.products[0]!.sku]);
    const log = await new MysqlWebhookOutbox(testDb.db).deliveries(endpointId, 100);
    const messageId = arrivals[0]!.headers['webhook-id'];
    expect(log.filter((entry) => entry.messageId === messageId).map((entry) => [entry.attempt, entry.status])).to.deep.equal([[1, 204]]);
  });

  it('delivers a message queued while no instance ran, once one starts', async function () {
    await importTitle('Changed while nobody runs');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(arrivals).to.have.length(0);
    await serve();
    await until(() => arrivals.length > 0, 10_000);
    expect(arrivals).to.have.length(1);
    expect(verified(arrivals[0]!).data).to.include({ changes: 1 });
  });

  it('prunes the delivery log at start: an attempt older than 30 days goes, with its message', async function () {
    const outbox = new MysqlWebhookOutbox(testDb.db);
    const old = new Date(Date.now() - 31 * 86_400_000);
    await outbox.enqueue({ id: 'msg_oldoldoldoldoldoldoldo', partnerId: 'acme', type: 'webhook.test', body: '{}', createdAt: old, endpointIds: [endpointId] });
    const [claimed] = await outbox.claimDue(old, 1, 60_000);
    expect(await outbox.recordAttempt(claimed!.deliveryId, claimed!.claimToken, { at: old, status: 204, error: null, durationMs: 5, excerpt: '' }, { state: 'delivered' })).to.equal(true);
    const logged = async (): Promise<string[]> => (await outbox.deliveries(endpointId, 100)).map((entry) => entry.messageId);
    expect(await logged()).to.include('msg_oldoldoldoldoldoldoldo');
    await serve();
    for (const deadline = Date.now() + 10_000; (await logged()).includes('msg_oldoldoldoldoldoldoldo') && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await logged()).to.not.include('msg_oldoldoldoldoldoldoldo');
    expect(await outbox.resend('msg_oldoldoldoldoldoldoldo', endpointId, new Date()), 'the message went too').to.equal(false);
    expect(await logged(), 'newer attempts stay').to.not.deep.equal([]);
  });

  it('sends a test event on `webhooks test`, and `webhooks deliveries` lists each attempt, newest first', async function () {
    answer = (arrival) => (arrivals.indexOf(arrival) === 0 ? 503 : 204);
    await serve({ WEBHOOK_RETRY_SCHEDULE: '1' });
    const sent = await cli(['webhooks', 'test', endpointId, '--json'], env, 'cli:prod');
    expect(sent.code, sent.stderr).to.equal(0);
    const { id, message_id: messageId } = sent.json() as { id: string; message_id: string };
    expect(id).to.equal(endpointId);
    await until(() => arrivals.length > 1, 10_000);
    expect(arrivals.map((arrival) => arrival.headers['webhook-id'])).to.deep.equal([messageId, messageId]);
    expect(verified(arrivals[1]!)).to.deep.include({ type: 'webhook.test', data: { endpoint_id: endpointId } });
    expect(await settled()).to.equal(0);
    const listed = await cli(['webhooks', 'deliveries', endpointId, '--json'], env, 'cli:prod');
    expect(listed.code, listed.stderr).to.equal(0);
    const log = listed.json() as { message_id: string; type: string; attempt: number; at: string; status: number | null; error: string | null; duration_ms: number }[];
    expect(Object.keys(log[0]!)).to.deep.equal(['message_id', 'type', 'attempt', 'resend', 'at', 'status', 'error', 'duration_ms']);
    expect(log.slice(0, 2).map((entry) => [entry.message_id, entry.type, entry.attempt, entry.status, entry.error])).to.deep.equal([
      [messageId, 'webhook.test', 2, 204, null],
      [messageId, 'webhook.test', 1, 503, null],
    ]);
    const unknown = await cli(['webhooks', 'deliveries', 'whep_0000000000000000'], env, 'cli:prod');
    expect([unknown.code, unknown.stderr]).to.deep.equal([1, 'error: no webhook endpoint with id "whep_0000000000000000"\n']);
  });

  // The attack, as run: one partner's 10 endpoints point at a listener that takes connections and
  // never answers, with messages queued while no instance ran; once the instance has opened every
  // connection it will, another partner's test event is sent. It must arrive while every one of
  // them still hangs, before any attempt times out: the order of events, not a time.
  it('keeps one partner\'s 10 hanging endpoints to its share of the slots: another partner\'s test event goes through while all of them hang', async function () {
    const sockets = new Set<Socket>();
    let opened = 0;
    let ended = 0;
    const listener = createTcpServer((socket) => {
      opened += 1;
      sockets.add(socket);
      socket.on('close', () => {
        sockets.delete(socket);
        ended += 1;
      });
      socket.resume();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const hanging = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/hooks`;
    const endpoints = new MysqlWebhookEndpoints(testDb.db);
    const hostile = Array.from({ length: 10 }, (_, i) => `whep_${String(i).padStart(16, 'a')}`);
    try {
      for (const id of hostile) {
        const added = await endpoints.insertWithin({
          id, partnerId: 'globex', url: `${hanging}/${id}`, description: null, status: 'enabled', createdAt: new Date(), secrets: { current: generateWebhookSecret(), previous: null },
        }, 10);
        expect(added).to.equal('added');
      }
      const outbox = new MysqlWebhookOutbox(testDb.db);
      for (let i = 0; i < 5; i += 1) {
        await outbox.enqueue({ id: `msg_hostile${String(i).padStart(15, '0')}`, partnerId: 'globex', type: 'webhook.test', body: '{}', createdAt: new Date(), endpointIds: hostile });
      }
      // The default 16 slots, and an attempt timeout well past what the test event needs.
      const service = await serve({ WEBHOOK_CONCURRENCY: '16', WEBHOOK_TIMEOUT_MS: '30000' });
      // The instance's first poll claims what it gives globex; the test event is queued once those connections are open.
      await until(() => opened >= 8, 30_000);
      const share = opened;
      const sent = await cli(['webhooks', 'test', endpointId, '--json'], env, 'cli:prod');
      expect(sent.code, sent.stderr).to.equal(0);
      const { message_id: messageId } = sent.json() as { message_id: string };
      await until(() => arrivals.length > 0 || ended > 0 || service.child.exitCode !== null, 45_000);
      expect(arrivals.map((arrival) => arrival.headers['webhook-id']), 'acme\'s test event arrived').to.deep.equal([messageId]);
      expect(ended, 'no attempt at globex\'s endpoints had ended').to.equal(0);
      expect([share, opened, sockets.size], 'globex holds half the 16 slots, not one more').to.deep.equal([8, 8, 8]);
    } finally {
      // Their deliveries go with them; the attempts in flight end as the connections close, and record nothing.
      for (const id of hostile) await endpoints.remove(id);
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => listener.close(resolve));
    }
  });

  it('makes an attempt again when the instance making it dies, once its claim lapses', async function () {
    answer = (arrival) => (arrivals.indexOf(arrival) === 0 ? 'hang' : 204);
    const first = await serve();
    await importTitle('Changed before a crash');
    await until(() => arrivals.length > 0, 10_000);
    expect(arrivals).to.have.length(1);
    first.kill();
    await first.exited();
    await serve();
    // The claim lasts 3 attempt timeouts (2 s each, at most 4 at once per endpoint, 4 in flight).
    await until(() => arrivals.length > 1, 15_000);
    expect(arrivals).to.have.length(2);
    expect(arrivals[1]!.headers['webhook-id'], 'the same message: receivers deduplicate by its id').to.equal(arrivals[0]!.headers['webhook-id']);
    verified(arrivals[1]!);
    expect(await settled()).to.equal(0);
    const log = await new MysqlWebhookOutbox(testDb.db).deliveries(endpointId, 100);
    const messageId = arrivals[0]!.headers['webhook-id'];
    expect(log.filter((entry) => entry.messageId === messageId).map((entry) => [entry.attempt, entry.status]), 'the dead instance recorded nothing').to.deep.equal([[1, 204]]);
  });

  it('loses nothing when the database goes mid-delivery: the attempt it could not record is made again once it is back', async function () {
    const target = new URL(testDb.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    try {
      const viaProxy = new URL(testDb.url);
      viaProxy.port = String(proxy.port);
      let answerFirst: (status: number) => void = () => undefined;
      const firstAnswered = new Promise<number>((resolve) => { answerFirst = resolve; });
      answer = (arrival) => (arrivals.indexOf(arrival) === 0 ? firstAnswered : 204);
      const service = await serve({ DATABASE_URL: viaProxy.toString() });
      await importTitle('Changed before the database went');
      await until(() => arrivals.length > 0, 10_000);
      // The receiver takes the message while the database is out of reach: the instance cannot record it.
      proxy.blackHole();
      answerFirst(204);
      await service.waitFor(/the outbox cannot be read/, 30_000);
      expect(arrivals, 'nothing is sent while the outbox cannot be read').to.have.length(1);
      proxy.restore();
      await service.waitFor(/the outbox is reachable again/, 30_000);
      await until(() => arrivals.length > 1, 20_000);
      expect(arrivals[1]!.headers['webhook-id'], 'the same message, made again').to.equal(arrivals[0]!.headers['webhook-id']);
      verified(arrivals[1]!);
      expect(await settled()).to.equal(0);
      const log = await new MysqlWebhookOutbox(testDb.db).deliveries(endpointId, 100);
      expect(log.filter((entry) => entry.messageId === arrivals[0]!.headers['webhook-id']).map((entry) => [entry.attempt, entry.status]),
        'the attempt made while the database was gone is not in the log; the one made after is').to.deep.equal([[1, 204]]);
      expect(arrivals).to.have.length(2);
    } finally {
      for (const service of services.splice(0)) {
        service.kill();
        await service.exited();
      }
      await proxy.close();
    }
  });
});
