import type { AddWebhookEndpoint } from './add-webhook-endpoint.js';
import type { ListWebhookDeliveries } from './list-webhook-deliveries.js';
import type { ListWebhookEndpoints } from './list-webhook-endpoints.js';
import type { RemoveWebhookEndpoint } from './remove-webhook-endpoint.js';
import type { ResendWebhookMessage } from './resend-webhook-message.js';
import type { RevealWebhookSecret } from './reveal-webhook-secret.js';
import type { RotateWebhookSecret } from './rotate-webhook-secret.js';
import type { SendWebhookTest } from './send-webhook-test.js';
import type { SetWebhookEndpointStatus } from './set-webhook-endpoint-status.js';

/** The endpoint use cases, one set for the CLI and the portal. */
export interface WebhookUseCases {
  readonly add: AddWebhookEndpoint;
  readonly list: ListWebhookEndpoints;
  readonly revealSecret: RevealWebhookSecret;
  readonly rotateSecret: RotateWebhookSecret;
  readonly setStatus: SetWebhookEndpointStatus;
  readonly remove: RemoveWebhookEndpoint;
  readonly sendTest: SendWebhookTest;
  readonly deliveries: ListWebhookDeliveries;
  readonly resend: ResendWebhookMessage;
}
