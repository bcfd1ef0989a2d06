import type { WebhookEndpoint, WebhookEndpointStatus, WebhookSecrets } from '../../domain/webhook-endpoint.js';

/** What `insertWithin` did. */
export type EndpointInsert = 'added' | 'partner_not_found' | 'limit_reached';

/** Where partners' webhook endpoints are kept; the rules are the use cases', this only stores. */
export interface WebhookEndpointStore {
  partnerExists(partnerId: string): Promise<boolean>;
  /** Stores the endpoint unless its partner is unknown or has `limit` endpoints already, in one step, so two adds cannot both take the last place. */
  insertWithin(endpoint: WebhookEndpoint, limit: number): Promise<EndpointInsert>;
  find(endpointId: string): Promise<WebhookEndpoint | null>;
  /** The partner's endpoints, oldest first. */
  list(partnerId: string): Promise<WebhookEndpoint[]>;
  /** False for no such endpoint. */
  setStatus(endpointId: string, status: WebhookEndpointStatus): Promise<boolean>;
  /** Replaces the secrets only while the current one is still `expectedCurrent`; false otherwise (or no such endpoint). */
  replaceSecrets(endpointId: string, expectedCurrent: string, secrets: WebhookSecrets): Promise<boolean>;
  /** False for no such endpoint. */
  remove(endpointId: string): Promise<boolean>;
}
