import { expect } from 'chai';
import { MemoryCatalogStore } from '../../src/adapters/memory/memory-catalog-store.js';
import { MemoryWebhookEndpoints } from '../../src/adapters/memory/memory-webhook-endpoints.js';
import { MemoryWebhookOutbox } from '../../src/adapters/memory/memory-webhook-outbox.js';
import { SendWebhookTest } from '../../src/application/webhooks/send-webhook-test.js';
import { WebhookError } from '../../src/domain/webhook-errors.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';
import { fixtureDocument } from '../fixtures/catalog-fixture.js';
import { importDocument } from '../support/import.js';

describe('SendWebhookTest, on the memory adapters', function () {
  const AT = Date.UTC(2026, 0, 5, 9, 0, 0);
  let endpoints: MemoryWebhookEndpoints;
  let outbox: MemoryWebhookOutbox;
  let sendTest: SendWebhookTest;

  beforeEach(async function () {
    const store = new MemoryCatalogStore();
    await importDocument(store, fixtureDocument());
    endpoints = new MemoryWebhookEndpoints(store);
    outbox = new MemoryWebhookOutbox(endpoints);
    sendTest = new SendWebhookTest(endpoints, outbox, { now: () => AT });
    await endpoints.insertWithin({
      id: 'whep_0000000000000001', partnerId: 'acme', url: 'https://hooks.example.com/a', description: null, status: 'disabled',
      createdAt: new Date(AT), secrets: { current: generateWebhookSecret(), previous: null },
    }, 10);
  });

  it('queues a webhook.test message carrying the endpoint\'s id, to that endpoint only, even while it is disabled', async function () {
    const sent = await sendTest.execute({ partnerId: 'acme', endpointId: 'whep_0000000000000001' });
    const [claimed, ...others] = await outbox.claimDue(new Date(AT), 10, 60_000);
    expect(others).to.deep.equal([]);
    expect(claimed!.endpoint.id).to.equal('whep_0000000000000001');
    expect(claimed!.message).to.deep.include({ id: sent.messageId, type: 'webhook.test' });
    expect(JSON.parse(claimed!.message.body)).to.deep.equal({ type: 'webhook.test', timestamp: '2026-01-05T09:00:00Z', data: { endpoint_id: 'whep_0000000000000001' } });
  });

  it('refuses another partner\'s endpoint as not found, queuing nothing', async function () {
    try {
      await sendTest.execute({ partnerId: 'globex', endpointId: 'whep_0000000000000001' });
      expect.fail('expected a refusal');
    } catch (error) {
      expect(error).to.be.instanceOf(WebhookError);
    }
    expect(await outbox.pendingCount()).to.equal(0);
  });
});
