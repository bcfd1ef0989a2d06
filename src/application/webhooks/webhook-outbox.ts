import type { WebhookEndpointStatus, WebhookSecrets } from '../../domain/webhook-endpoint.js';
import type { WebhookMessage } from '../../domain/webhook-messages.js';
import type { AttemptError } from './webhook-sender.js';

/** A message waiting to go out: its body is the exact text every attempt signs and sends. */
export interface OutboxMessage {
  /** `msg_…`: the `webhook-id` of every attempt, to every endpoint. */
  readonly id: string;
  readonly partnerId: string;
  readonly type: WebhookMessage['type'];
  readonly body: string;
  readonly createdAt: Date;
  /** One delivery per endpoint, each due at `createdAt`. */
  readonly endpointIds: readonly string[];
  /**
   * The W3C `traceparent` of the traced work that queued it (an import), for each attempt's span to
   * link to; absent or null when that work was not traced. Opaque here: only the adapters read it.
   */
  readonly traceparent?: string | null;
}

/**
 * How many attempts at once a worker makes to one endpoint, and to one partner's endpoints together,
 * and how many it has in flight now, by endpoint id (`busy`) and by partner id (`busyPartners`).
 */
export interface ClaimRoom {
  readonly perEndpoint: number;
  readonly perPartner: number;
  readonly busy: ReadonlyMap<string, number>;
  readonly busyPartners: ReadonlyMap<string, number>;
}

/** A delivery a worker holds until `claimExpiresAt`, with what it needs to make the next attempt. */
export interface ClaimedDelivery {
  readonly deliveryId: number;
  /** Proves the claim when the attempt is recorded: a claim that expired and was taken again no longer holds. */
  readonly claimToken: string;
  readonly claimExpiresAt: Date;
  /** Attempts made before this one. */
  readonly attempts: number;
  /** Attempts at the message to the endpoint by its earlier deliveries (a resend's): the delivery log numbers on from them. */
  readonly earlierAttempts: number;
  readonly message: { readonly id: string; readonly type: WebhookMessage['type']; readonly body: string; readonly createdAt: Date; readonly traceparent: string | null };
  readonly endpoint: { readonly id: string; readonly partnerId: string; readonly url: string; readonly status: WebhookEndpointStatus; readonly secrets: WebhookSecrets };
}

/** One attempt as the delivery log keeps it. `excerpt` is at most the first 1 KiB of the answer. */
export interface AttemptRecord {
  readonly at: Date;
  readonly status: number | null;
  readonly error: AttemptError | null;
  readonly durationMs: number;
  readonly excerpt: string;
}

/** What an attempt came to, as the worker decided from the retry rules. */
export type DeliveryNext =
  | { readonly state: 'delivered' }
  | { readonly state: 'retry'; readonly nextAttemptAt: Date }
  | { readonly state: 'failed' };

/** A line of an endpoint's delivery log, newest first. */
export interface DeliveryLogEntry {
  readonly messageId: string;
  readonly type: WebhookMessage['type'];
  /** Its number among every attempt at the message to the endpoint, its resends' included: 1 for the first. */
  readonly attempt: number;
  /** Made for a resend of the message, rather than for its first sending. */
  readonly resend: boolean;
  readonly at: Date;
  readonly status: number | null;
  readonly error: AttemptError | null;
  readonly durationMs: number;
}

/**
 * The outbox the delivery worker works from: messages, a delivery per message and endpoint, and
 * every attempt. Rows only; when to retry and what an answer means are the worker's rules.
 */
export interface WebhookOutbox {
  /** Stores a message with its deliveries (a test message, a resend's original); imports queue theirs inside their own unit of work. */
  enqueue(message: OutboxMessage): Promise<void>;
  /**
   * Claims up to `limit` pending deliveries due at `now` that no live claim holds, until `now + leaseMs`:
   * two workers never hold one delivery, and a claim whose worker died expires. Taken in turns across
   * partners, and within a partner in turns across its endpoints (each endpoint's earliest due first;
   * the partners and endpoints the worker is least busy with first), and with `room`, no endpoint
   * beyond `room.perEndpoint` and no partner's endpoints together beyond `room.perPartner`, counting
   * what the worker already holds: one partner's backlog, on one endpoint or ten, never fills a claim
   * while another partner has a delivery due.
   */
  claimDue(now: Date, limit: number, leaseMs: number, room?: ClaimRoom): Promise<ClaimedDelivery[]>;
  /**
   * Logs the attempt and moves the delivery on (delivered, due again at `nextAttemptAt` with its claim
   * released, or failed), only while `claimToken` still holds it; false, and nothing written, otherwise.
   */
  recordAttempt(deliveryId: number, claimToken: string, attempt: AttemptRecord, next: DeliveryNext): Promise<boolean>;
  /** Deliveries still to be made (due or not). */
  pendingCount(): Promise<number>;
  /** The endpoint's last `limit` attempts, newest first. */
  deliveries(endpointId: string, limit: number): Promise<DeliveryLogEntry[]>;
  /**
   * Sends a message to one endpoint of its partner again, due at `now`: a pending delivery of it is
   * made due now, else a new one is queued, marked a resend, whose attempts the log numbers on from
   * the message's earlier ones (its own retry schedule starts afresh). False when the message or the
   * endpoint is unknown, or the endpoint is another partner's.
   */
  resend(messageId: string, endpointId: string, now: Date): Promise<boolean>;
  /**
   * When the endpoint's current run of failures began: its oldest attempt since its newest delivered
   * (2xx) one. Null when its newest attempt delivered, or it has made none.
   */
  failingSince(endpointId: string): Promise<Date | null>;
  /**
   * Forgets attempts made before `before`, then the messages created before it that no delivery waits
   * for and no attempt left in the log is of, with their deliveries; returns how many attempts went.
   */
  prune(before: Date): Promise<number>;
}
