import { findEndpoint } from './find-endpoint.js';
import type { WebhookEndpointStore } from './webhook-endpoint-store.js';
import type { DeliveryLogEntry, WebhookOutbox } from './webhook-outbox.js';

/** The most attempts a delivery log shows. */
export const DELIVERY_LOG_LENGTH = 100;

/** An endpoint's delivery log (`webhooks deliveries`, the portal's log): its last 100 attempts, newest first. */
export class ListWebhookDeliveries {
  constructor(
    private readonly store: WebhookEndpointStore,
    private readonly outbox: WebhookOutbox,
  ) {}

  /** `partnerId` null: an operator, who may read any endpoint's log. */
  async execute(input: { partnerId: string | null; endpointId: string }): Promise<DeliveryLogEntry[]> {
    const endpoint = await findEndpoint(this.store, input.partnerId, input.endpointId);
    return this.outbox.deliveries(endpoint.id, DELIVERY_LOG_LENGTH);
  }
}
