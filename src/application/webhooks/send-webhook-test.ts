import { webhookBody, webhookTestMessage } from '../../domain/webhook-messages.js';
import { newWebhookMessageId } from '../../domain/webhook-signature.js';
import type { Clock } from '../common/clock.js';
import { findEndpoint } from './find-endpoint.js';
import type { WebhookEndpointStore } from './webhook-endpoint-store.js';
import type { WebhookOutbox } from './webhook-outbox.js';

/**
 * Queues a `webhook.test` message to one endpoint (`webhooks test`, the portal's "Send test
 * event"), whatever its status: trying an endpoint before enabling it is what a test is for.
 */
export class SendWebhookTest {
  constructor(
    private readonly store: WebhookEndpointStore,
    private readonly outbox: WebhookOutbox,
    private readonly clock: Clock,
  ) {}

  /** `partnerId` null: an operator, who may test any endpoint. */
  async execute(input: { partnerId: string | null; endpointId: string }): Promise<{ id: string; messageId: string }> {
    const endpoint = await findEndpoint(this.store, input.partnerId, input.endpointId);
    const at = new Date(this.clock.now());
    const messageId = newWebhookMessageId();
    await this.outbox.enqueue({
      id: messageId, partnerId: endpoint.partnerId, type: 'webhook.test', body: webhookBody(webhookTestMessage({ at, endpointId: endpoint.id })),
      createdAt: at, endpointIds: [endpoint.id],
    });
    return { id: endpoint.id, messageId };
  }
}
