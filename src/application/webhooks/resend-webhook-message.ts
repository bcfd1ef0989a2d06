import { messageNotFound } from '../../domain/webhook-errors.js';
import type { Clock } from '../common/clock.js';
import { findEndpoint } from './find-endpoint.js';
import type { WebhookEndpointStore } from './webhook-endpoint-store.js';
import type { WebhookOutbox } from './webhook-outbox.js';

/**
 * Sends a message to one endpoint again, due now (`webhooks resend`, the portal's "Resend"): the
 * same body and `webhook-id`, so a receiver that handled it already can tell. Not audited, as a
 * test event is not: it changes no setting, and the delivery log shows its attempts.
 */
export class ResendWebhookMessage {
  constructor(
    private readonly store: WebhookEndpointStore,
    private readonly outbox: WebhookOutbox,
    private readonly clock: Clock,
  ) {}

  /** `partnerId` null: an operator, who may resend to any endpoint; a message is only ever its own partner's. */
  async execute(input: { partnerId: string | null; endpointId: string; messageId: string }): Promise<{ id: string; messageId: string }> {
    const endpoint = await findEndpoint(this.store, input.partnerId, input.endpointId);
    if (!(await this.outbox.resend(input.messageId, endpoint.id, new Date(this.clock.now())))) throw messageNotFound(input.messageId, endpoint.id);
    return { id: endpoint.id, messageId: input.messageId };
  }
}
