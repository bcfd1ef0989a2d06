import { signingSecrets } from '../../domain/webhook-endpoint.js';
import { FAILING_ENDPOINT_DISABLED_AFTER_MS, WEBHOOK_ATTEMPT_RETENTION_MS, retryDelayMs, verdictOf, type AttemptVerdict } from '../../domain/webhook-retries.js';
import { signWebhook } from '../../domain/webhook-signature.js';
import type { Clock } from '../common/clock.js';
import type { ClaimedDelivery, DeliveryNext, WebhookOutbox } from './webhook-outbox.js';
import type { AttemptOutcome, WebhookSender } from './webhook-sender.js';
import type { WebhookEndpointStore } from './webhook-endpoint-store.js';
import type { AuditLog } from '../admin-sign-in/audit-log.js';

/** Attempts in flight at once to one endpoint, in one instance: a slow endpoint holds at most these of the instance's slots. */
export const WEBHOOK_ATTEMPTS_PER_ENDPOINT = 4;

/**
 * Attempts in flight at once to one partner's endpoints together, in one instance of `concurrency`
 * slots: half of them (8 of the default 16), at least one. However many of its receivers hang, a
 * partner leaves the other half to every other partner; a quarter would take four hanging partners
 * to fill an instance, but would send an import's message to a partner's 10 endpoints over three
 * polls where half takes two, close to the 2 s promised from the commit.
 */
export function webhookAttemptsPerPartner(concurrency: number): number {
  return Math.max(1, Math.floor(concurrency / 2));
}

export interface DeliveryLimits {
  /** Attempts in flight at once in this process (`WEBHOOK_CONCURRENCY`). */
  readonly concurrency: number;
  /** Attempts in flight at once to one endpoint, in this process. */
  readonly perEndpoint: number;
  /** Attempts in flight at once to one partner's endpoints together, in this process (`webhookAttemptsPerPartner`). */
  readonly perPartner: number;
  /** How long one attempt may take (`WEBHOOK_TIMEOUT_MS`): claims outlast the attempts they hold. */
  readonly attemptTimeoutMs: number;
  /** The waits between attempts, in seconds (`WEBHOOK_RETRY_SCHEDULE`). */
  readonly retrySchedule: readonly number[];
}

/** What the deliveries tell an operator's monitoring; no partner, endpoint or URL. */
export interface DeliveryMetrics {
  attemptMade(outcome: AttemptOutcomeLabel, seconds: number): void;
}

/** An attempt's outcome as counted: delivered, failed with an answer, failed without one (by why), or disabled the endpoint. */
export type AttemptOutcomeLabel = 'delivered' | 'endpoint_gone' | 'http_error' | NonNullable<AttemptOutcome['error']>;

const noDeliveryMetrics: DeliveryMetrics = { attemptMade: () => undefined };

/**
 * The delivery worker's one step: claims the deliveries it has room for and makes one attempt at
 * each, signed at the moment it is sent, then records it and decides what follows (delivered;
 * again after the schedule's next wait, or the receiver's longer `Retry-After`; failed when the
 * schedule is spent; the endpoint disabled on 410, or once its attempts have failed for 5 days).
 * Every instance runs one; the outbox's claims keep two from making the same attempt.
 */
export class DeliverWebhooks {
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * Deliveries claimed and not yet recorded, by endpoint and by partner: the claim takes no more of an
   * endpoint than `perEndpoint` less these, nor of a partner than `perPartner` less these, so every
   * attempt claimed starts at once (polls never overlap).
   */
  private readonly claimedByEndpoint = new Map<string, number>();
  private readonly claimedByPartner = new Map<string, number>();

  constructor(
    private readonly outbox: WebhookOutbox,
    private readonly endpoints: WebhookEndpointStore,
    private readonly audit: AuditLog,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly limits: DeliveryLimits,
    private readonly metrics: DeliveryMetrics = noDeliveryMetrics,
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * How long a claim holds: (concurrency / perEndpoint, rounded up, + 2) attempt timeouts, 90 s with
   * the defaults. An attempt starts as soon as it is claimed and ends within one timeout; the rest
   * is margin for recording it on a slow database. A claim whose instance died is taken again once
   * it lapses.
   */
  get leaseMs(): number {
    return this.limits.attemptTimeoutMs * (Math.ceil(this.limits.concurrency / this.limits.perEndpoint) + 2);
  }

  /** Attempts started and not yet recorded. */
  get busy(): number {
    return this.inFlight.size;
  }

  /** Claims up to the free slots and starts an attempt at each; returns how many it started. Never throws for one attempt's failure. */
  async poll(): Promise<number> {
    const room = this.limits.concurrency - this.inFlight.size;
    if (room <= 0) return 0;
    // No more of one endpoint, nor of one partner's endpoints together, than it has slots free: hanging
    // receivers, one endpoint's backlog or a partner's ten, must not fill this instance's slots while
    // another partner's message waits.
    const claimed = await this.outbox.claimDue(new Date(this.clock.now()), room, this.leaseMs, {
      perEndpoint: this.limits.perEndpoint, perPartner: this.limits.perPartner, busy: this.claimedByEndpoint, busyPartners: this.claimedByPartner,
    });
    for (const delivery of claimed) {
      const { id: endpointId, partnerId } = delivery.endpoint;
      count(this.claimedByEndpoint, endpointId, 1);
      count(this.claimedByPartner, partnerId, 1);
      const running: Promise<void> = this.attempt(delivery).finally(() => {
        this.inFlight.delete(running);
        count(this.claimedByEndpoint, endpointId, -1);
        count(this.claimedByPartner, partnerId, -1);
      });
      this.inFlight.add(running);
    }
    return claimed.length;
  }

  /** Resolves once every attempt started so far is recorded (or has failed to be). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    try {
      if (delivery.endpoint.status === 'disabled' && delivery.message.type !== 'webhook.test') {
        await this.outbox.recordAttempt(delivery.deliveryId, delivery.claimToken,
          { at: new Date(this.clock.now()), status: null, error: 'endpoint_disabled', durationMs: 0, excerpt: '' }, { state: 'failed' });
        return;
      }
      const now = new Date(this.clock.now());
      const headers = signWebhook({
        messageId: delivery.message.id,
        timestampSeconds: Math.floor(now.getTime() / 1000),
        body: delivery.message.body,
        secrets: signingSecrets(delivery.endpoint.secrets, now),
      });
      const { message, endpoint } = delivery;
      const outcome = await this.sender.send({
        url: endpoint.url, headers: { ...headers }, body: message.body, subject: {
          messageId: message.id, type: message.type, endpointId: endpoint.id, partnerId: endpoint.partnerId,
          attempt: delivery.earlierAttempts + delivery.attempts + 1, traceparent: message.traceparent,
        },
      });
      const verdict = verdictOf(outcome.status);
      const next = this.nextAfter(delivery, verdict, outcome);
      const at = new Date(this.clock.now());
      const recorded = await this.outbox.recordAttempt(delivery.deliveryId, delivery.claimToken,
        { at, status: outcome.status, error: outcome.error, durationMs: outcome.durationMs, excerpt: outcome.excerpt }, next);
      this.metrics.attemptMade(labelOf(verdict, outcome), outcome.durationMs / 1000);
      if (recorded && verdict === 'endpoint_gone') await this.disable(delivery, at);
      if (recorded && verdict === 'failed' && await this.failingTooLong(delivery.endpoint.id, at)) await this.disable(delivery, at);
    } catch {
      // The outbox or the endpoint store could not be reached: the claim expires and another attempt is made.
    }
  }

  private nextAfter(delivery: ClaimedDelivery, verdict: AttemptVerdict, outcome: AttemptOutcome): DeliveryNext {
    if (verdict === 'delivered') return { state: 'delivered' };
    if (verdict === 'endpoint_gone') return { state: 'failed' };
    const delay = retryDelayMs(this.limits.retrySchedule, delivery.attempts + 1, outcome.retryAfterSeconds, this.random);
    return delay === null ? { state: 'failed' } : { state: 'retry', nextAttemptAt: new Date(this.clock.now() + delay) };
  }

  /** Forgets attempts past their retention (30 days), and the messages no delivery waits for any more. */
  async prune(): Promise<number> {
    return this.outbox.prune(new Date(this.clock.now() - WEBHOOK_ATTEMPT_RETENTION_MS));
  }

  /** Every attempt at the endpoint for 5 days has failed: nothing was delivered in that time. */
  private async failingTooLong(endpointId: string, now: Date): Promise<boolean> {
    const since = await this.outbox.failingSince(endpointId);
    return since !== null && now.getTime() - since.getTime() >= FAILING_ENDPOINT_DISABLED_AFTER_MS;
  }

  /** 410 Gone (the receiver says the endpoint is gone for good), or 5 days of failures: nothing more goes to it until it is enabled again. */
  private async disable(delivery: ClaimedDelivery, at: Date): Promise<void> {
    const endpoint = await this.endpoints.find(delivery.endpoint.id);
    if (endpoint === null || endpoint.status === 'disabled') return;
    if (!(await this.endpoints.setStatus(endpoint.id, 'disabled'))) return;
    await this.audit.record({ at, partnerId: endpoint.partnerId, adminEmail: null, action: 'webhook.disabled', keyId: null, endpointId: endpoint.id });
  }
}

/** Adds `by` to the count of `key`, forgetting a count that comes to 0. */
function count(counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n === 0) counts.delete(key);
  else counts.set(key, n);
}

function labelOf(verdict: AttemptVerdict, outcome: AttemptOutcome): AttemptOutcomeLabel {
  if (verdict === 'delivered' || verdict === 'endpoint_gone') return verdict;
  return outcome.error ?? 'http_error';
}
