import { endpointNotFound } from '../../domain/webhook-errors.js';
import type { Actor, AuditLog } from '../admin-sign-in/audit-log.js';
import type { Clock } from '../common/clock.js';
import { findEndpoint } from './find-endpoint.js';
import type { WebhookEndpointStore } from './webhook-endpoint-store.js';

/** Deletes an endpoint and its secrets (`webhooks remove`, the portal's "Delete"). */
export class RemoveWebhookEndpoint {
  constructor(
    private readonly store: WebhookEndpointStore,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** `partnerId` null: an operator, who may remove any endpoint. */
  async execute(input: { partnerId: string | null; endpointId: string; actor: Actor }): Promise<{ id: string }> {
    const { partnerId, endpointId, actor } = input;
    const endpoint = await findEndpoint(this.store, partnerId, endpointId);
    if (!(await this.store.remove(endpointId))) throw endpointNotFound(endpointId);
    await this.audit.record({
      at: new Date(this.clock.now()), partnerId: endpoint.partnerId, adminEmail: actor?.adminEmail ?? null, action: 'webhook.deleted', keyId: null, endpointId,
    });
    return { id: endpointId };
  }
}
