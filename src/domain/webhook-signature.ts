import { createHmac, randomBytes } from 'node:crypto';
import { webhookSecretKey } from './webhook-secret.js';

/** The headers of one attempt of a message, to Standard Webhooks. */
export interface WebhookHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
  readonly 'content-type': 'application/json';
}

/** A message's id: `msg_` and 128 random bits, the same on every attempt of the message, for receivers to deduplicate by. */
export function newWebhookMessageId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/** `v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` keyed with the secret's bytes. */
export function webhookSignature(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', webhookSecretKey(secret)).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/**
 * Signs the exact body bytes that will be sent, once per secret, space-separated in the order given
 * (the current secret first: `signingSecrets`). Receivers verify against the raw body.
 */
export function signWebhook(input: {
  readonly messageId: string;
  readonly timestampSeconds: number;
  readonly body: string;
  readonly secrets: readonly string[];
}): WebhookHeaders {
  const { messageId, timestampSeconds, body, secrets } = input;
  if (secrets.length === 0) throw new Error('a webhook message needs at least one secret to be signed with');
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((secret) => webhookSignature(secret, messageId, timestampSeconds, body)).join(' '),
    'content-type': 'application/json',
  };
}
