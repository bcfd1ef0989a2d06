import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { MemoryWebhookEndpoints } from '../../src/adapters/memory/memory-webhook-endpoints.js';
import { MemoryWebhookOutbox } from '../../src/adapters/memory/memory-webhook-outbox.js';
import { createContainer, TOKENS } from '../../src/composition/container.js';
import type { WebhookUseCases } from '../../src/application/webhooks/webhook-use-cases.js';
import { PREVIOUS_SECRET_LIFETIME_MS, signingSecrets } from '../../src/domain/webhook-endpoint.js';
import { WebhookError } from '../../src/domain/webhook-errors.js';
import { webhookBody, webhookTestMessage } from '../../src/domain/webhook-messages.js';
import { newWebhookMessageId, signWebhook } from '../../src/domain/webhook-signature.js';
import { memoryPortalWorld, type PortalWorld } from '../support/portal-world.js';

/** The WebhookError a use case refuses with; anything else, or no refusal, fails the test. */
async function refusal(promise: Promise<unknown>): Promise<WebhookError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WebhookError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('webhook endpoint use cases, on the memory adapters', function () {
  let world: PortalWorld;
  let endpoints: MemoryWebhookEndpoints;
  let outbox: MemoryWebhookOutbox;
  let webhooks: WebhookUseCases;
  const admin = { adminEmail: 'ada@acme.example' };
  const URL_ = 'https://hooks.acme.example/catalog';

  /** The use cases as the composition root binds them, over the world's memory adapters. */
  function useCases(allowPrivateTargets: boolean): WebhookUseCases {
    return createContainer({
      admin: { keys: world.keys, ...world.admin, announcer: world.announcer, clock: world.clock },
      webhooks: { endpoints, outbox, allowPrivateTargets },
    }).get(TOKENS.WebhookUseCases);
  }

  beforeEach(async function () {
    world = await memoryPortalWorld();
    endpoints = new MemoryWebhookEndpoints(world.store);
    outbox = new MemoryWebhookOutbox(endpoints);
    webhooks = useCases(false);
  });

  const audited = async (): Promise<unknown[]> => (await world.admin.audit.list('acme', 50)).map(({ action, adminEmail, endpointId, keyId }) => ({ action, adminEmail, endpointId, keyId }));

  it('adds an enabled endpoint with a fresh secret, lists it without any secret, and logs webhook.created with the admin', async function () {
    const { endpoint, secret } = await webhooks.add.execute({ partnerId: 'acme', url: URL_, description: ' Shop sync ', actor: admin });
    expect(endpoint).to.deep.include({ partnerId: 'acme', url: URL_, description: 'Shop sync', status: 'enabled', createdAt: new Date(world.clock.now()) });
    expect(endpoint.id).to.match(/^whep_[0-9a-f]{16}$/);
    expect(secret).to.match(/^whsec_/);
    expect(endpoint.secrets).to.deep.equal({ current: secret, previous: null });
    const listed = await webhooks.list.execute({ partnerId: 'acme' });
    expect(listed).to.deep.equal([{ id: endpoint.id, partnerId: 'acme', url: URL_, description: 'Shop sync', status: 'enabled', createdAt: endpoint.createdAt }]);
    expect(JSON.stringify(listed)).to.not.include(secret.slice(6));
    expect(await audited()).to.deep.equal([{ action: 'webhook.created', adminEmail: admin.adminEmail, endpointId: endpoint.id, keyId: null }]);
  });

  it('refuses a URL by its reason, an unknown partner, and a description over 255 characters, storing and logging nothing', async function () {
    const refused = await refusal(webhooks.add.execute({ partnerId: 'acme', url: 'http://hooks.acme.example/', description: null, actor: null }));
    expect([refused.code, refused.message]).to.deep.equal(['invalid_webhook_url', 'webhook URL refused: the scheme is http; only https is allowed']);
    const unknown = await refusal(webhooks.add.execute({ partnerId: 'nobody', url: URL_, description: null, actor: null }));
    expect([unknown.code, unknown.message]).to.deep.equal(['partner_not_found', 'no partner with id "nobody"; import its catalog first']);
    expect((await refusal(webhooks.add.execute({ partnerId: 'acme', url: URL_, description: 'd'.repeat(256), actor: null }))).code).to.equal('invalid_webhook_description');
    expect((await refusal(webhooks.list.execute({ partnerId: 'nobody' }))).code).to.equal('partner_not_found');
    expect(await webhooks.list.execute({ partnerId: 'acme' })).to.deep.equal([]);
    expect(await audited()).to.deep.equal([]);
  });

  it('takes http and private addresses only when allowPrivateTargets is set', async function () {
    const url = 'http://127.0.0.1:8080/hook';
    expect((await refusal(webhooks.add.execute({ partnerId: 'acme', url, description: null, actor: null }))).message)
      .to.equal('webhook URL refused: the scheme is http; only https is allowed');
    const { endpoint } = await useCases(true).add.execute({ partnerId: 'acme', url, description: null, actor: null });
    expect(endpoint.url).to.equal(url);
  });

  it('allows 10 endpoints per partner and refuses the 11th with a clear error, other partners unaffected', async function () {
    for (let i = 0; i < 10; i += 1) await webhooks.add.execute({ partnerId: 'acme', url: `${URL_}/${i}`, description: null, actor: null });
    const eleventh = await refusal(webhooks.add.execute({ partnerId: 'acme', url: `${URL_}/10`, description: null, actor: null }));
    expect([eleventh.code, eleventh.message]).to.deep.equal([
      'webhook_endpoint_limit', 'partner acme has 10 webhook endpoints already, the most it may have; remove one first',
    ]);
    expect(await webhooks.list.execute({ partnerId: 'acme' })).to.have.length(10);
    await webhooks.add.execute({ partnerId: 'globex', url: URL_, description: null, actor: null });
  });

  it('reveals the current secret; rotates it so both sign for 24 hours, the new first; logs the rotation without any secret', async function () {
    const { endpoint, secret: old } = await webhooks.add.execute({ partnerId: 'acme', url: URL_, description: null, actor: admin });
    expect(await webhooks.revealSecret.execute({ partnerId: 'acme', endpointId: endpoint.id })).to.deep.equal({ id: endpoint.id, secret: old });
    world.clock.advance(1_000);
    const rotated = await webhooks.rotateSecret.execute({ partnerId: null, endpointId: endpoint.id, actor: null });
    expect(rotated.id).to.equal(endpoint.id);
    expect(rotated.secret).to.match(/^whsec_/).and.not.equal(old);
    expect(await webhooks.revealSecret.execute({ partnerId: null, endpointId: endpoint.id })).to.deep.equal(rotated);
    const stored = (await endpoints.find(endpoint.id))!;
    const rotatedAt = world.clock.now();
    const body = webhookBody(webhookTestMessage({ at: new Date(), endpointId: endpoint.id }));
    const headers = signWebhook({
      messageId: newWebhookMessageId(), timestampSeconds: Math.floor(Date.now() / 1000), body,
      secrets: signingSecrets(stored.secrets, new Date(rotatedAt + PREVIOUS_SECRET_LIFETIME_MS - 1)),
    });
    expect(new Webhook(old).verify(body, { ...headers })).to.deep.equal(JSON.parse(body));
    expect(new Webhook(rotated.secret).verify(body, { ...headers, 'webhook-signature': headers['webhook-signature'].split(' ')[0]! })).to.deep.equal(JSON.parse(body));
    expect(signingSecrets(stored.secrets, new Date(rotatedAt + PREVIOUS_SECRET_LIFETIME_MS))).to.deep.equal([rotated.secret]);
    const log = JSON.stringify(await world.admin.audit.list('acme', 50));
    expect(log).to.not.include(old.slice(6)).and.not.include(rotated.secret.slice(6));
    expect(await audited()).to.deep.equal([
      { action: 'webhook.secret_rotated', adminEmail: null, endpointId: endpoint.id, keyId: null },
      { action: 'webhook.created', adminEmail: admin.adminEmail, endpointId: endpoint.id, keyId: null },
    ]);
  });

  it('disables and enables, logging each change once, and removes, logging webhook.deleted', async function () {
    const { endpoint } = await webhooks.add.execute({ partnerId: 'acme', url: URL_, description: null, actor: null });
    expect(await webhooks.setStatus.execute({ partnerId: 'acme', endpointId: endpoint.id, status: 'disabled', actor: admin })).to.deep.equal({ id: endpoint.id, status: 'disabled' });
    expect((await webhooks.list.execute({ partnerId: 'acme' }))[0]?.status).to.equal('disabled');
    await webhooks.setStatus.execute({ partnerId: 'acme', endpointId: endpoint.id, status: 'disabled', actor: admin });
    await webhooks.setStatus.execute({ partnerId: null, endpointId: endpoint.id, status: 'enabled', actor: null });
    expect((await webhooks.list.execute({ partnerId: 'acme' }))[0]?.status).to.equal('enabled');
    expect(await webhooks.remove.execute({ partnerId: 'acme', endpointId: endpoint.id, actor: admin })).to.deep.equal({ id: endpoint.id });
    expect(await webhooks.list.execute({ partnerId: 'acme' })).to.deep.equal([]);
    expect((await audited()).map((e) => (e as { action: string }).action)).to.deep.equal(['webhook.deleted', 'webhook.enabled', 'webhook.disabled', 'webhook.created']);
  });

  it('answers another partner\'s endpoint as it answers a missing one, for an admin; an operator may act on any', async function () {
    const { endpoint } = await webhooks.add.execute({ partnerId: 'globex', url: URL_, description: null, actor: null });
    const missing = 'whep_ffffffffffffffff';
    for (const endpointId of [endpoint.id, missing]) {
      const message = `no webhook endpoint with id ${JSON.stringify(endpointId)}`;
      for (const attempt of [
        webhooks.revealSecret.execute({ partnerId: 'acme', endpointId }),
        webhooks.rotateSecret.execute({ partnerId: 'acme', endpointId, actor: admin }),
        webhooks.setStatus.execute({ partnerId: 'acme', endpointId, status: 'disabled', actor: admin }),
        webhooks.remove.execute({ partnerId: 'acme', endpointId, actor: admin }),
      ]) {
        const refused = await refusal(attempt);
        expect([refused.code, refused.message]).to.deep.equal(['webhook_endpoint_not_found', message]);
      }
    }
    expect((await endpoints.find(endpoint.id))?.status).to.equal('enabled');
    expect((await webhooks.revealSecret.execute({ partnerId: null, endpointId: endpoint.id })).id).to.equal(endpoint.id);
    await webhooks.remove.execute({ partnerId: null, endpointId: endpoint.id, actor: null });
    expect((await refusal(webhooks.remove.execute({ partnerId: null, endpointId: endpoint.id, actor: null }))).code).to.equal('webhook_endpoint_not_found');
    expect((await world.admin.audit.list('globex', 10)).map((e) => e.action)).to.deep.equal(['webhook.deleted', 'webhook.created']);
  });

  it('resends a message of the endpoint\'s partner, due at once with the same id, unaudited; another partner\'s message or endpoint is not found', async function () {
    const { endpoint } = await webhooks.add.execute({ partnerId: 'acme', url: URL_, description: null, actor: admin });
    const { endpoint: theirs } = await webhooks.add.execute({ partnerId: 'globex', url: URL_, description: null, actor: null });
    const sent = await webhooks.sendTest.execute({ partnerId: 'acme', endpointId: endpoint.id });
    const foreign = await webhooks.sendTest.execute({ partnerId: null, endpointId: theirs.id });
    const now = new Date(world.clock.now());
    for (const claimed of await outbox.claimDue(now, 10, 60_000)) {
      await outbox.recordAttempt(claimed.deliveryId, claimed.claimToken, { at: now, status: 204, error: null, durationMs: 1, excerpt: '' }, { state: 'delivered' });
    }
    expect(await webhooks.resend.execute({ partnerId: 'acme', endpointId: endpoint.id, messageId: sent.messageId })).to.deep.equal({ id: endpoint.id, messageId: sent.messageId });
    expect((await outbox.claimDue(now, 10, 60_000)).map((c) => [c.message.id, c.endpoint.id, c.attempts])).to.deep.equal([[sent.messageId, endpoint.id, 0]]);

    for (const messageId of [foreign.messageId, 'msg_zzzzzzzzzzzzzzzzzzzzzz']) {
      const refused = await refusal(webhooks.resend.execute({ partnerId: 'acme', endpointId: endpoint.id, messageId }));
      expect([refused.code, refused.message]).to.deep.equal(['webhook_message_not_found', `no webhook message with id ${JSON.stringify(messageId)} for webhook endpoint ${JSON.stringify(endpoint.id)}`]);
    }
    const notTheirs = await refusal(webhooks.resend.execute({ partnerId: 'acme', endpointId: theirs.id, messageId: foreign.messageId }));
    expect(notTheirs.code).to.equal('webhook_endpoint_not_found');
    expect(await outbox.claimDue(now, 10, 60_000)).to.deep.equal([]);
    expect((await audited()).map((e) => (e as { action: string }).action)).to.deep.equal(['webhook.created']);
  });
});
