import { rotatedSecrets } from '../../domain/webhook-endpoint.js';
import { endpointNotFound } from '../../domain/webhook-errors.js';
import { generateWebhookSecret } from '../../domain/webhook-secret.js';
import type { Actor, AuditLog } from '../admin-sign-in/audit-log.js';
import type { Clock } from '../common/clock.js';
import { findEndpoint } from './find-endpoint.js';
import type { WebhookEndpointStore } from './webhook-endpoint-store.js';

/** Tries when another rotation of the same endpoint keeps getting in first. */
const ROTATION_ATTEMPTS = 3;

/**
 * A new signing secret (`webhooks rotate`, the portal's "Rotate secret"): it signs first from now
 * on, and the one it replaces signs beside it for 24 hours, so the partner's receiver can switch.
 */
export class RotateWebhookSecret {
  constructor(
    private readonly store: WebhookEndpointStore,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** `partnerId` null: an operator, who may rotate any endpoint's secret. */
  async execute(input: { partnerId: string | null; endpointId: string; actor: Actor }): Promise<{ id: string; secret: string }> {
    const { partnerId, endpointId, actor } = input;
    for (let attempt = 1; ; attempt += 1) {
      const endpoint = await findEndpoint(this.store, partnerId, endpointId);
      const now = new Date(this.clock.now());
      const secret = generateWebhookSecret();
      // Only over the secret just read: two rotations at once must not both keep the same old one.
      if (await this.store.replaceSecrets(endpointId, endpoint.secrets.current, rotatedSecrets(endpoint.secrets, secret, now))) {
        await this.audit.record({
          at: now, partnerId: endpoint.partnerId, adminEmail: actor?.adminEmail ?? null, action: 'webhook.secret_rotated', keyId: null, endpointId,
        });
        return { id: endpointId, secret };
      }
      if (attempt === ROTATION_ATTEMPTS) throw new Error(`the secret of webhook endpoint ${endpointId} is being rotated elsewhere; try again`);
      if ((await this.store.find(endpointId)) === null) throw endpointNotFound(endpointId);
    }
  }
}
