import type { EndpointInsert, WebhookEndpointStore } from '../../application/webhooks/webhook-endpoint-store.js';
import type { WebhookEndpoint, WebhookEndpointStatus, WebhookSecrets } from '../../domain/webhook-endpoint.js';

/** Whether a partner is in the catalog this process serves. */
export interface KnownPartners {
  hasPartner(partnerId: string): boolean;
}

/**
 * Webhook endpoints in this process (memory storage), gone when it stops. Each method is one
 * synchronous step, so the limit check and the insert cannot be split by another add.
 */
export class MemoryWebhookEndpoints implements WebhookEndpointStore {
  private readonly endpoints = new Map<string, WebhookEndpoint>();

  constructor(private readonly partners: KnownPartners) {}

  partnerExists(partnerId: string): Promise<boolean> {
    return Promise.resolve(this.partners.hasPartner(partnerId));
  }

  insertWithin(endpoint: WebhookEndpoint, limit: number): Promise<EndpointInsert> {
    if (!this.partners.hasPartner(endpoint.partnerId)) return Promise.resolve('partner_not_found');
    if (this.mine(endpoint.partnerId).length >= limit) return Promise.resolve('limit_reached');
    if (this.endpoints.has(endpoint.id)) return Promise.reject(new Error(`webhook endpoint id ${endpoint.id} is taken`));
    this.endpoints.set(endpoint.id, endpoint);
    return Promise.resolve('added');
  }

  find(endpointId: string): Promise<WebhookEndpoint | null> {
    return Promise.resolve(this.endpoints.get(endpointId) ?? null);
  }

  list(partnerId: string): Promise<WebhookEndpoint[]> {
    return Promise.resolve(this.mine(partnerId));
  }

  setStatus(endpointId: string, status: WebhookEndpointStatus): Promise<boolean> {
    return Promise.resolve(this.update(endpointId, (endpoint) => ({ ...endpoint, status })));
  }

  replaceSecrets(endpointId: string, expectedCurrent: string, secrets: WebhookSecrets): Promise<boolean> {
    const endpoint = this.endpoints.get(endpointId);
    if (endpoint?.secrets.current !== expectedCurrent) return Promise.resolve(false);
    return Promise.resolve(this.update(endpointId, () => ({ ...endpoint, secrets })));
  }

  remove(endpointId: string): Promise<boolean> {
    return Promise.resolve(this.endpoints.delete(endpointId));
  }

  /** The endpoint now, for the outbox of this process. */
  held(endpointId: string): WebhookEndpoint | undefined {
    return this.endpoints.get(endpointId);
  }

  /** Ids of the partner's enabled endpoints, for an import's messages. */
  enabledIds(partnerId: string): string[] {
    return this.mine(partnerId).filter((endpoint) => endpoint.status === 'enabled').map((endpoint) => endpoint.id);
  }

  private mine(partnerId: string): WebhookEndpoint[] {
    return [...this.endpoints.values()].filter((endpoint) => endpoint.partnerId === partnerId)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
  }

  private update(endpointId: string, change: (endpoint: WebhookEndpoint) => WebhookEndpoint): boolean {
    const endpoint = this.endpoints.get(endpointId);
    if (endpoint === undefined) return false;
    this.endpoints.set(endpointId, change(endpoint));
    return true;
  }
}
