import { expect } from 'chai';
import type { WebhookEndpointStore } from '../../src/application/webhooks/webhook-endpoint-store.js';
import type { AttemptRecord, ClaimedDelivery, OutboxMessage, WebhookOutbox } from '../../src/application/webhooks/webhook-outbox.js';
import type { WebhookEndpoint } from '../../src/domain/webhook-endpoint.js';
import { webhookBody, webhookTestMessage } from '../../src/domain/webhook-messages.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';

/** Called per test: the fixture catalog (partners acme and globex), no endpoint and no message. */
export type WebhookOutboxFactory = () => Promise<{ readonly outbox: WebhookOutbox; readonly endpoints: WebhookEndpointStore }>;

const T0 = new Date(Date.UTC(2026, 0, 5, 9, 0, 0, 123));
const at = (ms: number): Date => new Date(T0.getTime() + ms);
const LEASE = 60_000;

function endpoint(id: string, partnerId = 'acme', fields: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id, partnerId, url: `https://hooks.example.com/${id}`, description: null, status: 'enabled', createdAt: T0,
    secrets: { current: generateWebhookSecret(), previous: null }, ...fields,
  };
}

function message(id: string, endpointIds: readonly string[], createdAt = T0, partnerId = 'acme'): OutboxMessage {
  return { id, partnerId, type: 'webhook.test', body: webhookBody(webhookTestMessage({ at: createdAt, endpointId: endpointIds[0] ?? 'none' })), createdAt, endpointIds };
}

function attempt(atMs: number, status: number | null, fields: Partial<AttemptRecord> = {}): AttemptRecord {
  return { at: at(atMs), status, error: status === null ? 'timeout' : null, durationMs: 120, excerpt: 'ok', ...fields };
}

/** Every WebhookOutbox adapter must pass these. */
export function webhookOutboxContract(adapterName: string, factory: WebhookOutboxFactory): void {
  describe(`WebhookOutbox contract: ${adapterName}`, function () {
    let outbox: WebhookOutbox;
    let endpoints: WebhookEndpointStore;
    const first = endpoint('whep_0000000000000001', 'acme', { secrets: { current: generateWebhookSecret(), previous: { secret: generateWebhookSecret(), until: at(86_400_000) } } });
    const second = endpoint('whep_0000000000000002', 'acme', { status: 'disabled' });
    const globex = endpoint('whep_0000000000000003', 'globex');

    beforeEach(async function () {
      ({ outbox, endpoints } = await factory());
      for (const e of [first, second, globex]) expect(await endpoints.insertWithin(e, 10)).to.equal('added');
    });

    it('claims a message\'s deliveries with its exact body and each endpoint\'s URL, status and secrets; a live claim is not claimed again', async function () {
      // With the span of the import that wrote it, as a traced import leaves it.
      const queued = { ...message('msg_aaaaaaaaaaaaaaaaaaaaaa', [first.id, second.id]), traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };
      await outbox.enqueue(queued);
      expect(await outbox.pendingCount()).to.equal(2);
      expect(await outbox.claimDue(at(-1), 10, LEASE)).to.deep.equal([]);
      const claimed = await outbox.claimDue(at(0), 10, LEASE);
      expect(claimed.map((c) => c.endpoint)).to.have.deep.members([first, second].map((e) => ({ id: e.id, partnerId: e.partnerId, url: e.url, status: e.status, secrets: e.secrets })));
      for (const c of claimed) {
        expect(c.message).to.deep.equal({ id: queued.id, type: 'webhook.test', body: queued.body, createdAt: T0, traceparent: queued.traceparent });
        expect(c.attempts).to.equal(0);
        expect(c.claimExpiresAt).to.deep.equal(at(LEASE));
      }
      expect(new Set(claimed.map((c) => c.deliveryId)).size).to.equal(2);
      expect(await outbox.claimDue(at(LEASE - 1), 10, LEASE)).to.deep.equal([]);
      expect(await outbox.pendingCount()).to.equal(2);
    });

    it('claims earliest due first, at most `limit`', async function () {
      await outbox.enqueue(message('msg_bbbbbbbbbbbbbbbbbbbbbb', [first.id], at(2_000)));
      await outbox.enqueue(message('msg_aaaaaaaaaaaaaaaaaaaaaa', [first.id], at(1_000)));
      await outbox.enqueue(message('msg_cccccccccccccccccccccc', [first.id], at(3_000)));
      const one = await outbox.claimDue(at(5_000), 2, LEASE);
      expect(one.map((c) => c.message.id)).to.deep.equal(['msg_aaaaaaaaaaaaaaaaaaaaaa', 'msg_bbbbbbbbbbbbbbbbbbbbbb']);
      expect((await outbox.claimDue(at(5_000), 2, LEASE)).map((c) => c.message.id)).to.deep.equal(['msg_cccccccccccccccccccccc']);
    });

    it('takes endpoints in turns, and no more of one than its room: a backlog for one never fills a claim while another has a delivery due', async function () {
      for (let i = 0; i < 9; i += 1) await outbox.enqueue(message(`msg_a${String(i).padStart(21, '0')}`, [first.id], at(i)));
      await outbox.enqueue(message('msg_bbbbbbbbbbbbbbbbbbbbbb', [globex.id], at(100), 'globex'));
      const two = await outbox.claimDue(at(1_000), 2, LEASE);
      expect(two.map((c) => c.message.id), 'the first of each endpoint before a second of any').to.deep.equal([`msg_a${'0'.repeat(21)}`, 'msg_bbbbbbbbbbbbbbbbbbbbbb']);
      const room = { perEndpoint: 4, perPartner: 8, busy: new Map([[first.id, 1]]), busyPartners: new Map([['acme', 1]]) };
      const more = await outbox.claimDue(at(1_000), 10, LEASE, room);
      expect(more.map((c) => c.message.id), 'three more for the endpoint already holding one, earliest due first').to.deep.equal(
        [1, 2, 3].map((i) => `msg_a${String(i).padStart(21, '0')}`));
      expect(await outbox.claimDue(at(1_000), 10, LEASE, { ...room, busy: new Map([[first.id, 4]]), busyPartners: new Map([['acme', 4]]) }), 'its room is full').to.deep.equal([]);
      expect((await outbox.claimDue(at(1_000), 10, LEASE, { ...room, busy: new Map(), busyPartners: new Map() })).map((c) => c.message.id)).to.have.length(4);
    });

    it('takes partners in turns, and no more of one partner\'s endpoints together than its room: one partner\'s backlog never fills a claim while another partner has a delivery due', async function () {
      const third = endpoint('whep_0000000000000004');
      const fourth = endpoint('whep_0000000000000005');
      for (const e of [third, fourth]) expect(await endpoints.insertWithin(e, 10)).to.equal('added');
      const acme = [first.id, second.id, third.id, fourth.id];
      const acmeMessage = (i: number): string => `msg_a${String(i).padStart(21, '0')}`;
      for (let i = 0; i < 5; i += 1) await outbox.enqueue(message(acmeMessage(i), acme, at(i)));
      await outbox.enqueue(message('msg_gggggggggggggggggggggg', [globex.id], at(100), 'globex'));
      const claimed = (deliveries: readonly ClaimedDelivery[]): string[][] => deliveries.map((c) => [c.endpoint.id, c.message.id]);
      const three = await outbox.claimDue(at(1_000), 3, LEASE);
      expect(claimed(three), 'each partner\'s first before a second of any: acme\'s earliest, globex\'s, then acme\'s next endpoint').to.have.deep.members([
        [first.id, acmeMessage(0)], [second.id, acmeMessage(0)], [globex.id, 'msg_gggggggggggggggggggggg'],
      ]);
      expect(three.find((c) => c.endpoint.id === globex.id)?.endpoint.partnerId).to.equal('globex');
      // acme holds 2 (one on each of its first two endpoints): 4 more fill its room of 6, its other endpoints' first turns before second ones.
      const room = { perEndpoint: 4, perPartner: 6, busy: new Map([[first.id, 1], [second.id, 1]]), busyPartners: new Map([['acme', 2], ['globex', 1]]) };
      expect(claimed(await outbox.claimDue(at(1_000), 16, LEASE, room)), 'acme up to its room, in turns across its endpoints').to.have.deep.members([
        [third.id, acmeMessage(0)], [fourth.id, acmeMessage(0)], [first.id, acmeMessage(1)], [second.id, acmeMessage(1)],
      ]);
      const full = { ...room, busy: new Map([[first.id, 2], [second.id, 2], [third.id, 1], [fourth.id, 1]]), busyPartners: new Map([['acme', 6], ['globex', 1]]) };
      expect(await outbox.claimDue(at(1_000), 16, LEASE, full), 'acme\'s room is full, though each of its endpoints has room').to.deep.equal([]);
      await outbox.enqueue(message('msg_hhhhhhhhhhhhhhhhhhhhhh', [globex.id], at(200), 'globex'));
      expect(claimed(await outbox.claimDue(at(1_000), 16, LEASE, full)), 'another partner\'s is taken all the same').to.deep.equal([[globex.id, 'msg_hhhhhhhhhhhhhhhhhhhhhh']]);
    });

    it('claims again a delivery whose claim expired, and the old claim can no longer record an attempt', async function () {
      await outbox.enqueue(message('msg_aaaaaaaaaaaaaaaaaaaaaa', [first.id]));
      const [dead] = await outbox.claimDue(at(0), 10, LEASE);
      const [again] = await outbox.claimDue(at(LEASE), 10, LEASE);
      expect(again?.deliveryId).to.equal(dead?.deliveryId);
      expect(again?.claimToken).to.not.equal(dead?.claimToken);
      expect(await outbox.recordAttempt(dead!.deliveryId, dead!.claimToken, attempt(LEASE + 1, 200), { state: 'delivered' })).to.equal(false);
      expect(await outbox.deliveries(first.id, 10)).to.deep.equal([]);
      expect(await outbox.recordAttempt(again!.deliveryId, again!.claimToken, attempt(LEASE + 2, 200), { state: 'delivered' })).to.equal(true);
      expect(await outbox.pendingCount()).to.equal(0);
    });

    it('records attempts: a retry releases the claim until its time, delivered and failed end the delivery', async function () {
      await outbox.enqueue(message('msg_aaaaaaaaaaaaaaaaaaaaaa', [first.id]));
      await outbox.enqueue(message('msg_bbbbbbbbbbbbbbbbbbbbbb', [first.id], at(1)));
      const claimed = await outbox.claimDue(at(10), 10, LEASE);
      let a = claimed[0];
      const b = claimed[1];
      expect(await outbox.recordAttempt(a!.deliveryId, a!.claimToken, attempt(20, 500, { excerpt: 'x'.repeat(2_000) }), { state: 'retry', nextAttemptAt: at(5_000) })).to.equal(true);
      expect(await outbox.recordAttempt(b!.deliveryId, b!.claimToken, attempt(30, null), { state: 'failed' })).to.equal(true);
      expect(await outbox.recordAttempt(b!.deliveryId, b!.claimToken, attempt(31, 200), { state: 'delivered' })).to.equal(false);
      expect(await outbox.pendingCount()).to.equal(1);
      expect(await outbox.claimDue(at(4_999), 10, LEASE)).to.deep.equal([]);
      [a] = await outbox.claimDue(at(5_000), 10, LEASE);
      expect(a?.attempts).to.equal(1);
      expect(await outbox.recordAttempt(a!.deliveryId, a!.claimToken, attempt(5_100, 204), { state: 'delivered' })).to.equal(true);
      expect(await outbox.claimDue(at(99_999_999), 10, LEASE)).to.deep.equal([]);
      expect(await outbox.pendingCount()).to.equal(0);
      expect(await outbox.deliveries(first.id, 100)).to.deep.equal([
        { messageId: 'msg_aaaaaaaaaaaaaaaaaaaaaa', type: 'webhook.test', attempt: 2, resend: false, at: at(5_100), status: 204, error: null, durationMs: 120 },
        { messageId: 'msg_bbbbbbbbbbbbbbbbbbbbbb', type: 'webhook.test', attempt: 1, resend: false, at: at(30), status: null, error: 'timeout', durationMs: 120 },
        { messageId: 'msg_aaaaaaaaaaaaaaaaaaaaaa', type: 'webhook.test', attempt: 1, resend: false, at: at(20), status: 500, error: null, durationMs: 120 },
      ]);
      expect((await outbox.deliveries(first.id, 2)).map((e) => e.at)).to.deep.equal([at(5_100), at(30)]);
      expect(await outbox.deliveries(second.id, 100)).to.deep.equal([]);
    });

    it('resends a message to an endpoint of its partner only, as a new delivery due now or by bringing a pending one forward', async function () {
      await outbox.enqueue(message('msg_aaaaaaaaaaaaaaaaaaaaaa', [first.id]));
      const [a] = await outbox.claimDue(at(0), 10, LEASE);
      await outbox.recordAttempt(a!.deliveryId, a!.claimToken, attempt(1, 200), { state: 'delivered' });
      expect(await outbox.resend('msg_aaaaaaaaaaaaaaaaaaaaaa', first.id, at(100))).to.equal(true);
      expect(await outbox.resend('msg_aaaaaaaaaaaaaaaaaaaaaa', globex.id, at(100))).to.equal(false);
      expect(await outbox.resend('msg_zzzzzzzzzzzzzzzzzzzzzz', first.id, at(100))).to.equal(false);
      expect(await outbox.resend('msg_aaaaaaaaaaaaaaaaaaaaaa', 'whep_ffffffffffffffff', at(100))).to.equal(false);
      const again = await outbox.claimDue(at(100), 10, LEASE);
      expect(again.map((c) => [c.message.id, c.endpoint.id, c.attempts])).to.deep.equal([['msg_aaaaaaaaaaaaaaaaaaaaaa', first.id, 0]]);
      await outbox.recordAttempt(again[0]!.deliveryId, again[0]!.claimToken, attempt(101, 503), { state: 'retry', nextAttemptAt: at(60_000) });
      expect(await outbox.resend('msg_aaaaaaaaaaaaaaaaaaaaaa', first.id, at(200))).to.equal(true);
      expect((await outbox.claimDue(at(200), 10, LEASE)).map((c) => c.deliveryId)).to.deep.equal([again[0]!.deliveryId]);
    });

    it('numbers a message\'s attempts at an endpoint on across its resends, marks a resend\'s, and gives each resend its retry schedule afresh', async function () {
      await outbox.enqueue(message('msg_aaaaaaaaaaaaaaaaaaaaaa', [first.id]));
      const record = async (t: number, status: number, next: Parameters<WebhookOutbox['recordAttempt']>[3]): Promise<ClaimedDelivery> => {
        const [claimed] = await outbox.claimDue(at(t), 10, LEASE);
        expect(await outbox.recordAttempt(claimed!.deliveryId, claimed!.claimToken, attempt(t, status), next)).to.equal(true);
        return claimed!;
      };
      await record(10, 500, { state: 'retry', nextAttemptAt: at(20) });
      await record(20, 500, { state: 'failed' });
      expect(await outbox.resend('msg_aaaaaaaaaaaaaaaaaaaaaa', first.id, at(100))).to.equal(true);
      const resent = await record(100, 503, { state: 'retry', nextAttemptAt: at(110) });
      expect(resent.attempts, 'the resend\'s own count, for its retry schedule').to.equal(0);
      expect((await record(110, 204, { state: 'delivered' })).attempts).to.equal(1);
      expect(await outbox.resend('msg_aaaaaaaaaaaaaaaaaaaaaa', first.id, at(200))).to.equal(true);
      await record(200, 204, { state: 'delivered' });
      // To an endpoint the message never went to: its first attempt there, made for a resend.
      const third = endpoint('whep_0000000000000004');
      expect(await endpoints.insertWithin(third, 10)).to.equal('added');
      expect(await outbox.resend('msg_aaaaaaaaaaaaaaaaaaaaaa', third.id, at(300))).to.equal(true);
      await record(300, 204, { state: 'delivered' });
      const log = (endpointId: string) => outbox.deliveries(endpointId, 100).then((entries) => entries.map((e) => [e.attempt, e.resend, e.status]));
      expect(await log(first.id)).to.deep.equal([[5, true, 204], [4, true, 204], [3, true, 503], [2, false, 500], [1, false, 500]]);
      expect(await log(third.id)).to.deep.equal([[1, true, 204]]);
    });

    it('forgets the deliveries of a removed endpoint', async function () {
      await outbox.enqueue(message('msg_aaaaaaaaaaaaaaaaaaaaaa', [first.id, second.id]));
      expect(await endpoints.remove(second.id)).to.equal(true);
      expect((await outbox.claimDue(at(0), 10, LEASE)).map((c) => c.endpoint.id)).to.deep.equal([first.id]);
      expect(await outbox.pendingCount()).to.equal(1);
    });

    it('prunes attempts made before a time, and only those; and messages older than it that no delivery waits for', async function () {
      await outbox.enqueue(message('msg_aaaaaaaaaaaaaaaaaaaaaa', [first.id]));
      for (const t of [10, 20, 30]) {
        const [c] = await outbox.claimDue(at(t), 1, LEASE);
        await outbox.recordAttempt(c!.deliveryId, c!.claimToken, attempt(t, 500), { state: 'retry', nextAttemptAt: at(t + 10) });
      }
      await outbox.enqueue(message('msg_bbbbbbbbbbbbbbbbbbbbbb', [globex.id], T0, 'globex'));
      expect(await outbox.prune(at(25))).to.equal(2);
      expect((await outbox.deliveries(first.id, 10)).map((e) => e.attempt)).to.deep.equal([3]);
      const c = (await outbox.claimDue(at(40), 10, LEASE)).find((claimed) => claimed.message.id === 'msg_aaaaaaaaaaaaaaaaaaaaaa');
      await outbox.recordAttempt(c!.deliveryId, c!.claimToken, attempt(40, 204), { state: 'delivered' });
      expect(await outbox.prune(at(35)), 'a message still waiting for globex keeps its place').to.equal(1);
      expect((await outbox.deliveries(first.id, 10)).map((e) => e.attempt)).to.deep.equal([4]);
      expect(await outbox.prune(at(50))).to.equal(1);
      expect(await outbox.resend('msg_aaaaaaaaaaaaaaaaaaaaaa', first.id, at(60)), 'the delivered message is gone').to.equal(false);
      expect(await outbox.resend('msg_bbbbbbbbbbbbbbbbbbbbbb', globex.id, at(60)), 'the pending one stays').to.equal(true);
      expect(await outbox.pendingCount()).to.equal(1);
    });

    it('tells since when an endpoint has only failed: from its oldest attempt after its newest delivered one', async function () {
      expect(await outbox.failingSince(first.id), 'no attempt').to.equal(null);
      await outbox.enqueue(message('msg_aaaaaaaaaaaaaaaaaaaaaa', [first.id, second.id]));
      const record = async (endpointId: string, t: number, status: number | null): Promise<void> => {
        const claimed = await outbox.claimDue(at(t), 10, LEASE);
        for (const c of claimed) {
          await outbox.recordAttempt(c.deliveryId, c.claimToken, c.endpoint.id === endpointId ? attempt(t, status) : attempt(t, 500),
            { state: 'retry', nextAttemptAt: at(t + 1) });
        }
      };
      await record(first.id, 10, 500);
      expect(await outbox.failingSince(first.id)).to.deep.equal(at(10));
      await record(first.id, 20, null);
      expect(await outbox.failingSince(first.id)).to.deep.equal(at(10));
      await record(first.id, 30, 204);
      expect(await outbox.failingSince(first.id), 'its newest attempt delivered').to.equal(null);
      await record(first.id, 40, 503);
      await record(first.id, 50, 302);
      expect(await outbox.failingSince(first.id)).to.deep.equal(at(40));
      expect(await outbox.failingSince(second.id), 'another endpoint\'s attempts are its own').to.deep.equal(at(10));
    });
  });
}
