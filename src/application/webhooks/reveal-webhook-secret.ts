import { findEndpoint } from './find-endpoint.js';
import type { WebhookEndpointStore } from './webhook-endpoint-store.js';

/** An endpoint's current signing secret (`webhooks secret`, the portal's "Reveal secret"). */
export class RevealWebhookSecret {
  constructor(private readonly store: WebhookEndpointStore) {}

  /** `partnerId` null: an operator, who may read any endpoint's. */
  async execute(input: { partnerId: string | null; endpointId: string }): Promise<{ id: string; secret: string }> {
    const endpoint = await findEndpoint(this.store, input.partnerId, input.endpointId);
    return { id: endpoint.id, secret: endpoint.secrets.current };
  }
}
