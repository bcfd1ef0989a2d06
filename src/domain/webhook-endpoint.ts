import { randomBytes } from 'node:crypto';

/** Endpoints one partner may have at most. */
export const MAX_WEBHOOK_ENDPOINTS_PER_PARTNER = 10;
/** Longest description kept; it fits the column that holds it. */
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 255;
/** After a rotation the old secret keeps signing beside the new one this long, so receivers can switch. */
export const PREVIOUS_SECRET_LIFETIME_MS = 24 * 60 * 60 * 1000;

export type WebhookEndpointStatus = 'enabled' | 'disabled';

/** What an endpoint's messages are signed with. */
export interface WebhookSecrets {
  readonly current: string;
  /** The secret before the last rotation, and until when it still signs; null before any rotation. */
  readonly previous: { readonly secret: string; readonly until: Date } | null;
}

/** One of a partner's webhook endpoints: where its `catalog.changed` messages are posted. */
export interface WebhookEndpoint {
  readonly id: string;
  readonly partnerId: string;
  /** Checked by `checkWebhookUrl`, in the form it returns. */
  readonly url: string;
  readonly description: string | null;
  readonly status: WebhookEndpointStatus;
  readonly createdAt: Date;
  readonly secrets: WebhookSecrets;
}

/** A fresh endpoint id: random, so it says nothing of the partner or the URL. */
export function newWebhookEndpointId(): string {
  return `whep_${randomBytes(8).toString('hex')}`;
}

/** The secrets after a rotation at `now`: `fresh` signs first, the one it replaces beside it for 24 hours. */
export function rotatedSecrets(secrets: WebhookSecrets, fresh: string, now: Date): WebhookSecrets {
  return { current: fresh, previous: { secret: secrets.current, until: new Date(now.getTime() + PREVIOUS_SECRET_LIFETIME_MS) } };
}

/** The secrets that sign a message sent at `now`, the current one first. */
export function signingSecrets(secrets: WebhookSecrets, now: Date): string[] {
  return secrets.previous !== null && now < secrets.previous.until ? [secrets.current, secrets.previous.secret] : [secrets.current];
}
