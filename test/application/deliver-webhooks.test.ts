import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { MemoryAuditLog } from '../../src/adapters/memory/memory-admin-store.js';
import { MemoryWebhookEndpoints } from '../../src/adapters/memory/memory-webhook-endpoints.js';
import { MemoryWebhookOutbox } from '../../src/adapters/memory/memory-webhook-outbox.js';
import { HttpWebhookSender } from '../../src/adapters/webhooks/http-webhook-sender.js';
import { DeliverWebhooks, type AttemptOutcomeLabel } from '../../src/application/webhooks/deliver-webhooks.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';
import { newWebhookMessageId } from '../../src/domain/webhook-signature.js';
import type { WebhookEndpoint } from '../../src/domain/webhook-endpoint.js';

interface Arrival {
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A receiver that answers each request with the next status of its script (the last one after that). */
async function receiver(script: (number | 'hang')[]): Promise<{ url: string; arrivals: Arrival[]; close: () => Promise<void> }> {
  const arrivals: Arrival[] = [];
  const server: Server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      arrivals.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const next = script[Math.min(arrivals.length - 1, script.length - 1)]!;
      if (next !== 'hang') res.writeHead(next, next === 429 ? { 'Retry-After': '2' } : {}).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

describe('DeliverWebhooks: attempts, retries and 410, against a real receiver', function () {
  this.timeout(30_000);
  let now: number;
  const clock = { now: () => now };
  let endpoints: MemoryWebhookEndpoints;
  let outbox: MemoryWebhookOutbox;
  let audit: MemoryAuditLog;
  let counted: AttemptOutcomeLabel[];
  const open: { close: () => Promise<void> }[] = [];

  beforeEach(function () {
    now = Date.parse('2026-11-25T10:00:00Z');
    endpoints = new MemoryWebhookEndpoints({ hasPartner: () => true });
    outbox = new MemoryWebhookOutbox(endpoints);
    audit = new MemoryAuditLog(100);
    counted = [];
  });
  afterEach(async function () {
    for (const server of open.splice(0)) await server.close();
  });

  const start = async (script: (number | 'hang')[]): Promise<Awaited<ReturnType<typeof receiver>>> => {
    const server = await receiver(script);
    open.push(server);
    return server;
  };
  const worker = (schedule: number[] = [5, 300], timeoutMs = 2_000): DeliverWebhooks => new DeliverWebhooks(
    outbox, endpoints, audit,
    new HttpWebhookSender({ timeoutMs, allowHttp: true, allowsAddress: () => true }),
    clock, { concurrency: 16, perEndpoint: 4, perPartner: 8, attemptTimeoutMs: timeoutMs, retrySchedule: schedule },
    { attemptMade: (outcome) => counted.push(outcome) }, () => 0.5,
  );
  const addEndpoint = async (url: string, status: 'enabled' | 'disabled' = 'enabled', partnerId = 'acme'): Promise<WebhookEndpoint> => {
    const endpoint: WebhookEndpoint = {
      id: `whep_${Math.random().toString(16).slice(2, 18).padEnd(16, '0')}`, partnerId, url, description: null, status,
      createdAt: new Date(now), secrets: { current: generateWebhookSecret(), previous: null },
    };
    expect(await endpoints.insertWithin(endpoint, 10)).to.equal('added');
    return endpoint;
  };
  const queue = async (endpointIds: string[], type: 'catalog.changed' | 'webhook.test' = 'catalog.changed', partnerId = 'acme'): Promise<{ id: string; body: string }> => {
    const id = newWebhookMessageId();
    const body = JSON.stringify({ type, timestamp: new Date(now).toISOString(), data: { changes: 0 } });
    await outbox.enqueue({ id, partnerId, type, body, createdAt: new Date(now), endpointIds });
    return { id, body };
  };
  const run = async (deliver: DeliverWebhooks): Promise<number> => {
    const started = await deliver.poll();
    await deliver.settled();
    return started;
  };

  it('signs each attempt so that the official library verifies it, and a 2xx delivers it once', async function () {
    const server = await start([204]);
    const endpoint = await addEndpoint(server.url);
    const message = await queue([endpoint.id]);
    const deliver = worker();
    expect(await run(deliver)).to.equal(1);
    expect(server.arrivals).to.have.length(1);
    const [arrival] = server.arrivals;
    expect(arrival!.body).to.equal(message.body);
    expect(arrival!.headers['webhook-id']).to.equal(message.id);
    expect(arrival!.headers['content-type']).to.equal('application/json');
    // The official verifier refuses a timestamp 5 minutes off real time: the test clock stands at a fixed date.
    now = Date.now();
    const fresh = await queue([endpoint.id]);
    await run(deliver);
    const second = server.arrivals[1]!;
    expect(new Webhook(endpoint.secrets.current).verify(second.body, second.headers as Record<string, string>)).to.deep.equal(JSON.parse(fresh.body));
    expect(await run(deliver), 'nothing left to deliver').to.equal(0);
    expect(counted).to.deep.equal(['delivered', 'delivered']);
    expect((await outbox.deliveries(endpoint.id, 10)).map((entry) => [entry.attempt, entry.status, entry.error])).to.deep.equal([[1, 204, null], [1, 204, null]]);
  });

  it('retries a failing attempt after the schedule\'s wait, and fails the message when the schedule is spent', async function () {
    const server = await start([500]);
    const endpoint = await addEndpoint(server.url);
    await queue([endpoint.id]);
    const deliver = worker([5, 300]);
    expect(await run(deliver)).to.equal(1);
    now += 4_000;
    expect(await run(deliver), 'not yet due: 5 s after the first attempt').to.equal(0);
    now += 1_000;
    expect(await run(deliver)).to.equal(1);
    now += 299_000;
    expect(await run(deliver)).to.equal(0);
    now += 1_000;
    expect(await run(deliver)).to.equal(1);
    now += 10 * 24 * 3600 * 1000;
    expect(await run(deliver), 'failed after the last wait').to.equal(0);
    expect(server.arrivals).to.have.length(3);
    expect(new Set(server.arrivals.map((a) => a.headers['webhook-id'])).size, 'one message id on every attempt').to.equal(1);
    expect((await outbox.deliveries(endpoint.id, 10)).map((entry) => entry.attempt)).to.deep.equal([3, 2, 1]);
    expect(counted).to.deep.equal(['http_error', 'http_error', 'http_error']);
    expect(await outbox.pendingCount()).to.equal(0);
  });

  it('waits for a longer Retry-After than the schedule\'s', async function () {
    const server = await start([429, 204]);
    const endpoint = await addEndpoint(server.url);
    await queue([endpoint.id]);
    const deliver = worker([1]);
    await run(deliver);
    now += 1_500;
    expect(await run(deliver), 'Retry-After: 2 outlasts the 1 s wait').to.equal(0);
    now += 600;
    expect(await run(deliver)).to.equal(1);
    expect(counted).to.deep.equal(['http_error', 'delivered']);
  });

  it('takes 410 as the endpoint gone: the message fails, the endpoint is disabled and the audit log says so', async function () {
    const server = await start([410]);
    const endpoint = await addEndpoint(server.url);
    await queue([endpoint.id]);
    await run(worker());
    expect((await endpoints.find(endpoint.id))!.status).to.equal('disabled');
    expect((await audit.list('acme', 10)).map((event) => [event.action, event.endpointId, event.adminEmail])).to.deep.equal([['webhook.disabled', endpoint.id, null]]);
    now += 3600_000;
    expect(await run(worker())).to.equal(0);
    expect(counted).to.deep.equal(['endpoint_gone']);
  });

  it('disables an endpoint whose attempts have all failed for 5 days, and not a day sooner', async function () {
    const server = await start([204, 500]);
    const endpoint = await addEndpoint(server.url);
    await queue([endpoint.id]);
    const deliver = worker(Array.from({ length: 10 }, () => 86_400));
    await run(deliver);
    now += 3600_000;
    await queue([endpoint.id]);
    expect(await run(deliver), 'the first failure, an hour after a delivery').to.equal(1);
    for (let day = 1; day <= 4; day += 1) {
      now += 86_400_000;
      expect(await run(deliver)).to.equal(1);
      expect((await endpoints.find(endpoint.id))!.status, `failing for ${day} days`).to.equal('enabled');
    }
    now += 86_400_000;
    expect(await run(deliver)).to.equal(1);
    expect((await endpoints.find(endpoint.id))!.status, 'failing for 5 days').to.equal('disabled');
    expect((await audit.list('acme', 10)).map((event) => [event.action, event.endpointId, event.adminEmail])).to.deep.equal([['webhook.disabled', endpoint.id, null]]);
    now += 86_400_000;
    await run(deliver);
    expect((await outbox.deliveries(endpoint.id, 1)).map((entry) => entry.error), 'nothing more is sent').to.deep.equal(['endpoint_disabled']);
    expect(server.arrivals).to.have.length(7);
  });

  it('forgets attempts after 30 days, and the messages no delivery waits for', async function () {
    const server = await start([204]);
    const endpoint = await addEndpoint(server.url);
    await queue([endpoint.id]);
    const deliver = worker();
    await run(deliver);
    now += 30 * 86_400_000;
    expect(await deliver.prune(), 'kept for 30 days').to.equal(0);
    expect(await outbox.deliveries(endpoint.id, 10)).to.have.length(1);
    now += 1;
    expect(await deliver.prune()).to.equal(1);
    expect(await outbox.deliveries(endpoint.id, 10)).to.deep.equal([]);
    expect(await outbox.resend(server.arrivals[0]!.headers['webhook-id'] as string, endpoint.id, new Date(now)), 'the message is gone too').to.equal(false);
  });

  it('sends nothing to an endpoint disabled after its message was queued, but sends a test message to it', async function () {
    const server = await start([204]);
    const endpoint = await addEndpoint(server.url);
    await queue([endpoint.id]);
    expect(await endpoints.setStatus(endpoint.id, 'disabled')).to.equal(true);
    await run(worker());
    expect(server.arrivals).to.have.length(0);
    expect((await outbox.deliveries(endpoint.id, 10)).map((entry) => entry.error)).to.deep.equal(['endpoint_disabled']);
    await queue([endpoint.id], 'webhook.test');
    await run(worker());
    expect(server.arrivals).to.have.length(1);
  });

  it('takes a flood of imports in its stride: every message once to every endpoint, never more than 4 at once to one, nor 8 to one partner\'s together', async function () {
    const inFlight = new Map<string, number>();
    let most = 0;
    const mostPerEndpoint = new Map<string, number>();
    const received = new Map<string, string[]>();
    const server = createServer((req, res) => {
      const path = req.url!;
      inFlight.set(path, (inFlight.get(path) ?? 0) + 1);
      mostPerEndpoint.set(path, Math.max(mostPerEndpoint.get(path) ?? 0, inFlight.get(path)!));
      most = Math.max(most, [...inFlight.values()].reduce((a, b) => a + b, 0));
      req.resume();
      req.on('end', () => setTimeout(() => {
        received.set(path, [...(received.get(path) ?? []), req.headers['webhook-id'] as string]);
        inFlight.set(path, inFlight.get(path)! - 1);
        res.writeHead(204).end();
      }, 50));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    open.push({ close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const targets = await Promise.all(Array.from({ length: 5 }, (_, i) => addEndpoint(`${base}/hook/${i}`)));
    const ids: string[] = [];
    for (let i = 0; i < 40; i += 1) ids.push((await queue(targets.map((target) => target.id))).id);
    const deliver = worker();
    for (let polls = 0; await outbox.pendingCount() > 0 && polls < 1_000; polls += 1) {
      await deliver.poll();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await deliver.settled();
    for (let i = 0; i < 5; i += 1) expect([...(received.get(`/hook/${i}`) ?? [])].sort(), `endpoint ${i}`).to.deep.equal([...ids].sort());
    expect(Math.max(...mostPerEndpoint.values()), 'at most 4 at once to one endpoint').to.be.at.most(4);
    expect(most, 'at most half the 16 slots at once to one partner\'s endpoints').to.be.within(5, 8);
    expect(counted).to.have.length(200);
  });

  /** An endpoint that never answers with `backlog` messages queued, then one for an endpoint that answers 204. */
  const hangingBacklog = async (backlog: number) => {
    const hanging = await start(['hang']);
    const healthy = await start([204]);
    const slow = await addEndpoint(hanging.url);
    const fine = await addEndpoint(healthy.url);
    for (let i = 0; i < backlog; i += 1) await queue([slow.id]);
    await queue([fine.id]);
    return { hanging, healthy };
  };

  /** Until the first attempt ends, whatever its outcome; what the worker counted by then. */
  const firstOutcome = async (): Promise<readonly AttemptOutcomeLabel[]> => {
    while (counted.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    return [...counted];
  };

  // The order of events, not a time, says the healthy message was not behind the hanging ones: it is
  // delivered while every hanging attempt still hangs, before any of them times out.
  it('lets no backlog of a hanging endpoint hold the slots another endpoint\'s message needs', async function () {
    const { hanging, healthy } = await hangingBacklog(40);
    const deliver = worker([5], 5_000);
    expect(await deliver.poll(), '4 attempts to the hanging endpoint, 1 to the other').to.equal(5);
    expect(await deliver.poll(), 'nothing more for the hanging one while its 4 hang').to.equal(0);
    expect(await firstOutcome(), 'the first attempt to end').to.deep.equal(['delivered']);
    expect(healthy.arrivals).to.have.length(1);
    expect(deliver.busy).to.equal(4);
    // The hanging receiver drops its connections: its attempts end now rather than at their timeout.
    await hanging.close();
    await deliver.settled();
  });

  it('keeps a hanging endpoint to its own slots: another endpoint\'s message goes through meanwhile', async function () {
    const { hanging, healthy } = await hangingBacklog(6);
    const deliver = worker([5], 1_500);
    expect(await deliver.poll(), 'at most 4 at once to one endpoint').to.equal(5);
    expect(await firstOutcome(), 'the first attempt to end: the healthy endpoint is not behind the hanging one').to.deep.equal(['delivered']);
    expect(healthy.arrivals).to.have.length(1);
    await deliver.settled();
    expect(hanging.arrivals).to.have.length(4);
    expect(await deliver.poll(), 'the rest once its slots are free').to.equal(2);
    await deliver.settled();
    expect(hanging.arrivals).to.have.length(6);
    expect(counted.filter((label) => label === 'timeout')).to.have.length(6);
  });

  // The attack: a partner's 10 endpoints never answer and have a backlog, which the worker claims
  // first; another partner's message queued after that is delivered while all of them still hang.
  it('keeps one partner\'s hanging endpoints, all 10 together, to its share: another partner\'s message goes at the next poll', async function () {
    const hanging = await start(['hang']);
    const healthy = await start([204]);
    const slow = await Promise.all(Array.from({ length: 10 }, () => addEndpoint(hanging.url)));
    for (let i = 0; i < 5; i += 1) await queue(slow.map((endpoint) => endpoint.id));
    const other = await addEndpoint(healthy.url, 'enabled', 'globex');
    const deliver = worker([5], 5_000);
    expect(await deliver.poll(), 'acme\'s share: half the 16 slots').to.equal(8);
    await queue([other.id], 'webhook.test', 'globex');
    expect(await deliver.poll(), 'globex\'s message, in a slot acme cannot take').to.equal(1);
    expect(await firstOutcome(), 'the first attempt to end: globex\'s, before any of acme\'s times out').to.deep.equal(['delivered']);
    expect(healthy.arrivals).to.have.length(1);
    expect(deliver.busy, 'acme\'s 8 still hang').to.equal(8);
    expect(await deliver.poll(), 'nothing more of acme\'s while its share is taken').to.equal(0);
    await hanging.close();
    await deliver.settled();
  });
});
