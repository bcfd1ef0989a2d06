import type { Attributes, Span } from '@opentelemetry/api';
import type { AttemptOutcome, AttemptSubject } from '../../application/webhooks/webhook-sender.js';
import { CLIENT_SPAN, SPAN_FAILED, type Tracing } from '../tracing/tracing.js';

/**
 * The span of one delivery attempt (decisions: traces): a client span, the root of a trace of its
 * own (the delivery loop serves no request), linked to the trace of the import that queued the
 * message when it was traced. Its context goes to the receiver in `traceparent`, so the partner's
 * spans are its children.
 *
 * The endpoint's URL is named by its host and port only. A partner's URL often carries a secret of
 * its own, in the query (`?token=`) or the path (chat services' incoming-webhook URLs are the secret),
 * and a span may hold no secret; the endpoint's id tells an operator which URL it was. Neither a
 * header (the signature) nor the body is recorded.
 */
export function startDeliverySpan(on: Tracing, subject: AttemptSubject, target: URL | null): Span {
  const attributes: Attributes = {
    'http.request.method': 'POST',
    'pcat.partner.id': subject.partnerId,
    'pcat.webhook.endpoint.id': subject.endpointId,
    'pcat.webhook.message.id': subject.messageId,
    'pcat.webhook.message.type': subject.type,
    'pcat.webhook.attempt': subject.attempt,
  };
  if (target !== null) {
    attributes['server.address'] = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    attributes['server.port'] = target.port === '' ? (target.protocol === 'https:' ? 443 : 80) : Number(target.port);
  }
  const queuedBy = on.contextOf(subject.traceparent ?? undefined);
  return on.startRoot('webhook delivery', attributes, queuedBy === undefined ? [] : [queuedBy], CLIENT_SPAN);
}

/**
 * Ends the attempt's span with what came of it: the answer's status, and as `error.type` why it
 * failed, the delivery log's reason when no answer came or the status of an answer other than 2xx.
 */
export function endDeliverySpan(span: Span, outcome: AttemptOutcome): void {
  if (outcome.status !== null) span.setAttribute('http.response.status_code', outcome.status);
  const delivered = outcome.status !== null && outcome.status >= 200 && outcome.status <= 299;
  const failure = outcome.error ?? (delivered ? null : String(outcome.status));
  if (failure !== null) {
    span.setAttribute('error.type', failure);
    span.setStatus({ code: SPAN_FAILED, message: failure });
  }
  span.end();
}
