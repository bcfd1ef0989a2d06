import type { WebhookMessage } from '../../domain/webhook-messages.js';

/** One attempt at delivering a signed message: where, with which headers, and the body's exact text. */
export interface WebhookAttempt {
  readonly url: string;
  /** The signature headers and the content type; the sender adds only the length, its own name and the trace context. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly subject: AttemptSubject;
}

/** What an attempt is of, for the sender's trace of it (decisions: traces); none of it is sent. */
export interface AttemptSubject {
  readonly messageId: string;
  readonly type: WebhookMessage['type'];
  readonly endpointId: string;
  readonly partnerId: string;
  /** Its number as the delivery log gives it: among every attempt at the message to the endpoint, its resends' included, 1 for the first. */
  readonly attempt: number;
  /** The `traceparent` the message was queued under (an import's), for the attempt's span to link to; null when none. */
  readonly traceparent: string | null;
}

/** Why an attempt failed before any answer came: for the delivery log, never a secret or an address. */
export type AttemptError =
  /** No whole answer head within the attempt's time. */
  | 'timeout'
  /** The host resolved to an address a webhook may not reach (loopback, private, link-local...). */
  | 'refused_address'
  /** The host name did not resolve. */
  | 'name_not_resolved'
  /** Refused, reset or TLS failed: no answer. */
  | 'connection_failed'
  /** Not a URL a webhook may be sent to (checked again at delivery: settings can change). */
  | 'invalid_url'
  /** The endpoint was disabled after the message was queued: nothing was sent (a test message is sent all the same). */
  | 'endpoint_disabled';

/** What one attempt came to. A 2xx `status` delivered the message; any other status or an `error` did not. */
export interface AttemptOutcome {
  /** The answer's HTTP status, or null when none came. */
  readonly status: number | null;
  readonly error: AttemptError | null;
  readonly durationMs: number;
  /** The wait the receiver asked for in `Retry-After`, in whole seconds, when it asked. */
  readonly retryAfterSeconds: number | null;
  /** At most the first 1 KiB of the answer's body, as text, for the delivery log. */
  readonly excerpt: string;
}

/** Makes one attempt; never throws, whatever the receiver does. */
export interface WebhookSender {
  send(attempt: WebhookAttempt): Promise<AttemptOutcome>;
}
