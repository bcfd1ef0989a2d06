import type { WebhookEndpoint } from '../../domain/webhook-endpoint.js';
import { partnerNotFound } from './add-webhook-endpoint.js';
import type { WebhookEndpointStore } from './webhook-endpoint-store.js';

/** An endpoint as listed: everything but its secrets. */
export type WebhookEndpointListing = Omit<WebhookEndpoint, 'secrets'>;

/** A partner's endpoints, oldest first (`webhooks list`, the portal's table): never a secret. */
export class ListWebhookEndpoints {
  constructor(private readonly store: WebhookEndpointStore) {}

  async execute(input: { partnerId: string }): Promise<WebhookEndpointListing[]> {
    const { partnerId } = input;
    if (!(await this.store.partnerExists(partnerId))) throw partnerNotFound(partnerId);
    return (await this.store.list(partnerId)).map(({ id, partnerId: partner, url, description, status, createdAt }) =>
      ({ id, partnerId: partner, url, description, status, createdAt }));
  }
}
