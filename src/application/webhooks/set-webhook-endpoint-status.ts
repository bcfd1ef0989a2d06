import type { WebhookEndpointStatus } from '../../domain/webhook-endpoint.js';
import { endpointNotFound } from '../../domain/webhook-errors.js';
import type { Actor, AuditLog } from '../admin-sign-in/audit-log.js';
import type { Clock } from '../common/clock.js';
import { findEndpoint } from './find-endpoint.js';
import type { WebhookEndpointStore } from './webhook-endpoint-store.js';

/**
 * Enables or disables an endpoint (`webhooks enable|disable`, the portal's "Enable"/"Disable"): a
 * disabled one gets no messages. Audited only when the status changes.
 */
export class SetWebhookEndpointStatus {
  constructor(
    private readonly store: WebhookEndpointStore,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** `partnerId` null: an operator, who may act on any endpoint. */
  async execute(input: { partnerId: string | null; endpointId: string; status: WebhookEndpointStatus; actor: Actor }): Promise<{ id: string; status: WebhookEndpointStatus }> {
    const { partnerId, endpointId, status, actor } = input;
    const endpoint = await findEndpoint(this.store, partnerId, endpointId);
    if (endpoint.status === status) return { id: endpointId, status };
    if (!(await this.store.setStatus(endpointId, status))) throw endpointNotFound(endpointId);
    await this.audit.record({
      at: new Date(this.clock.now()), partnerId: endpoint.partnerId, adminEmail: actor?.adminEmail ?? null,
      action: status === 'enabled' ? 'webhook.enabled' : 'webhook.disabled', keyId: null, endpointId,
    });
    return { id: endpointId, status };
  }
}
