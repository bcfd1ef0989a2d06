import { endpointNotFound } from '../../domain/webhook-errors.js';
import type { WebhookEndpoint } from '../../domain/webhook-endpoint.js';
import type { WebhookEndpointStore } from './webhook-endpoint-store.js';

/**
 * The endpoint an admin or operator names. `partnerId` null: an operator, who may name any; an
 * admin's own partner otherwise, and another partner's endpoint is "not found", as a missing one is.
 */
export async function findEndpoint(store: WebhookEndpointStore, partnerId: string | null, endpointId: string): Promise<WebhookEndpoint> {
  const endpoint = await store.find(endpointId);
  if (endpoint === null || (partnerId !== null && endpoint.partnerId !== partnerId)) throw endpointNotFound(endpointId);
  return endpoint;
}
