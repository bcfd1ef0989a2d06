import { MAX_WEBHOOK_DESCRIPTION_LENGTH, MAX_WEBHOOK_ENDPOINTS_PER_PARTNER, newWebhookEndpointId, type WebhookEndpoint } from '../../domain/webhook-endpoint.js';
import { WebhookError } from '../../domain/webhook-errors.js';
import { generateWebhookSecret } from '../../domain/webhook-secret.js';
import { checkWebhookUrl, type WebhookUrlOptions } from '../../domain/webhook-url.js';
import type { Actor, AuditLog } from '../admin-sign-in/audit-log.js';
import type { Clock } from '../common/clock.js';
import type { WebhookEndpointStore } from './webhook-endpoint-store.js';

/** An endpoint just added, with its signing secret. */
export interface AddedWebhookEndpoint {
  readonly endpoint: WebhookEndpoint;
  readonly secret: string;
}

/**
 * Registers an endpoint (`webhooks add`, the portal's "Add endpoint"): its URL checked, a fresh
 * signing secret, enabled; at most `MAX_WEBHOOK_ENDPOINTS_PER_PARTNER` per partner.
 */
export class AddWebhookEndpoint {
  constructor(
    private readonly store: WebhookEndpointStore,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    /** Which URLs it takes, for the pages that say so. */
    readonly urls: WebhookUrlOptions,
  ) {}

  async execute(input: { partnerId: string; url: string; description: string | null; actor: Actor }): Promise<AddedWebhookEndpoint> {
    const { partnerId, actor } = input;
    const url = checkWebhookUrl(input.url, this.urls);
    const description = input.description === null || input.description.trim() === '' ? null : input.description.trim();
    if (description !== null && description.length > MAX_WEBHOOK_DESCRIPTION_LENGTH) {
      throw new WebhookError('invalid_webhook_description', `A description is at most ${MAX_WEBHOOK_DESCRIPTION_LENGTH} characters.`);
    }
    const now = new Date(this.clock.now());
    const secret = generateWebhookSecret();
    const endpoint: WebhookEndpoint = {
      id: newWebhookEndpointId(), partnerId, url, description, status: 'enabled', createdAt: now, secrets: { current: secret, previous: null },
    };
    const added = await this.store.insertWithin(endpoint, MAX_WEBHOOK_ENDPOINTS_PER_PARTNER);
    if (added === 'partner_not_found') throw partnerNotFound(partnerId);
    if (added === 'limit_reached') {
      throw new WebhookError('webhook_endpoint_limit',
        `partner ${partnerId} has ${MAX_WEBHOOK_ENDPOINTS_PER_PARTNER} webhook endpoints already, the most it may have; remove one first`);
    }
    await this.audit.record({ at: now, partnerId, adminEmail: actor?.adminEmail ?? null, action: 'webhook.created', keyId: null, endpointId: endpoint.id });
    return { endpoint, secret };
  }
}

export function partnerNotFound(partnerId: string): WebhookError {
  return new WebhookError('partner_not_found', `no partner with id ${JSON.stringify(partnerId)}; import its catalog first`);
}
