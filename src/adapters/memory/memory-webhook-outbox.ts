import { randomBytes } from 'node:crypto';
import type { AttemptRecord, ClaimedDelivery, DeliveryLogEntry, DeliveryNext, ClaimRoom, OutboxMessage, WebhookOutbox } from '../../application/webhooks/webhook-outbox.js';
import type { WebhookEndpoint } from '../../domain/webhook-endpoint.js';
import { verdictOf } from '../../domain/webhook-retries.js';

/** The endpoints of this process, read as they are now. */
export interface HeldEndpoints {
  held(endpointId: string): WebhookEndpoint | undefined;
  enabledIds(partnerId: string): string[];
}

interface Delivery {
  readonly id: number;
  readonly messageId: string;
  readonly endpointId: string;
  attempts: number;
  /** Attempts at the message to the endpoint by its earlier deliveries, when this one was queued. */
  readonly earlierAttempts: number;
  readonly resend: boolean;
  state: 'pending' | 'delivered' | 'failed';
  nextAttemptAt: Date;
  claim: { readonly token: string; readonly expiresAt: Date } | null;
}

interface Attempt extends AttemptRecord {
  readonly deliveryId: number;
  readonly attempt: number;
}

/**
 * The outbox of one process (memory storage): what is not delivered when it stops is lost. Each
 * method is one synchronous step, so a claim cannot be split by another.
 */
export class MemoryWebhookOutbox implements WebhookOutbox {
  private readonly messages = new Map<string, Omit<OutboxMessage, 'endpointIds'>>();
  private readonly deliveryRows = new Map<number, Delivery>();
  private attempts: Attempt[] = [];
  private nextDelivery = 1;

  constructor(private readonly endpoints: HeldEndpoints) {}

  /** Ids of the partner's enabled endpoints now. */
  enabledEndpoints(partnerId: string): string[] {
    return this.endpoints.enabledIds(partnerId);
  }

  enqueue(message: OutboxMessage): Promise<void> {
    const { endpointIds, ...stored } = message;
    if (this.messages.has(message.id)) return Promise.reject(new Error(`webhook message id ${message.id} is taken`));
    this.messages.set(message.id, stored);
    for (const endpointId of endpointIds) this.addDelivery(message.id, endpointId, message.createdAt);
    return Promise.resolve();
  }

  claimDue(now: Date, limit: number, leaseMs: number, room?: ClaimRoom): Promise<ClaimedDelivery[]> {
    const byDue = (a: Delivery, b: Delivery): number => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime() || a.id - b.id;
    const due: { delivery: Delivery; partnerId: string }[] = [];
    for (const delivery of this.deliveryRows.values()) {
      if (delivery.state !== 'pending' || delivery.nextAttemptAt > now || (delivery.claim !== null && delivery.claim.expiresAt > now)) continue;
      const endpoint = this.endpoints.held(delivery.endpointId);
      // An endpoint removed takes its deliveries with it, as MySQL's foreign key does.
      if (endpoint === undefined) this.deliveryRows.delete(delivery.id);
      else due.push({ delivery, partnerId: endpoint.partnerId });
    }
    due.sort((a, b) => byDue(a.delivery, b.delivery));
    // Each delivery's place in its endpoint's turn, counting what the worker already holds of the endpoint...
    const endpointPlaces = new Map<string, number>();
    const inEndpointRoom = due.map((entry) => {
      const place = (endpointPlaces.get(entry.delivery.endpointId) ?? room?.busy.get(entry.delivery.endpointId) ?? 0) + 1;
      endpointPlaces.set(entry.delivery.endpointId, place);
      return { ...entry, endpointPlace: place };
    }).filter(({ endpointPlace }) => endpointPlace <= (room?.perEndpoint ?? limit));
    // ...then in its partner's turn, its endpoints' first places before any second, counting what the worker holds of the partner.
    inEndpointRoom.sort((a, b) => a.endpointPlace - b.endpointPlace || byDue(a.delivery, b.delivery));
    const partnerPlaces = new Map<string, number>();
    const taken = inEndpointRoom.map((entry) => {
      const place = (partnerPlaces.get(entry.partnerId) ?? room?.busyPartners.get(entry.partnerId) ?? 0) + 1;
      partnerPlaces.set(entry.partnerId, place);
      return { delivery: entry.delivery, place };
    })
      .filter(({ place }) => place <= (room?.perPartner ?? limit))
      .sort((a, b) => a.place - b.place || byDue(a.delivery, b.delivery))
      .slice(0, limit)
      .map(({ delivery }) => delivery)
      .sort(byDue);
    return Promise.resolve(taken.map((delivery) => {
      const endpoint = this.endpoints.held(delivery.endpointId)!;
      const message = this.messages.get(delivery.messageId)!;
      delivery.claim = { token: randomBytes(16).toString('hex'), expiresAt: new Date(now.getTime() + leaseMs) };
      return {
        deliveryId: delivery.id, claimToken: delivery.claim.token, claimExpiresAt: delivery.claim.expiresAt, attempts: delivery.attempts,
        earlierAttempts: delivery.earlierAttempts,
        message: { id: message.id, type: message.type, body: message.body, createdAt: message.createdAt, traceparent: message.traceparent ?? null },
        endpoint: { id: endpoint.id, partnerId: endpoint.partnerId, url: endpoint.url, status: endpoint.status, secrets: endpoint.secrets },
      };
    }));
  }

  recordAttempt(deliveryId: number, claimToken: string, attempt: AttemptRecord, next: DeliveryNext): Promise<boolean> {
    const delivery = this.deliveryRows.get(deliveryId);
    if (delivery === undefined || delivery.state !== 'pending' || delivery.claim?.token !== claimToken) return Promise.resolve(false);
    delivery.attempts += 1;
    this.attempts.push({ ...attempt, deliveryId, attempt: delivery.attempts });
    delivery.claim = null;
    if (next.state === 'retry') delivery.nextAttemptAt = next.nextAttemptAt;
    else delivery.state = next.state;
    return Promise.resolve(true);
  }

  pendingCount(): Promise<number> {
    return Promise.resolve([...this.deliveryRows.values()].filter((d) => d.state === 'pending' && this.endpoints.held(d.endpointId) !== undefined).length);
  }

  deliveries(endpointId: string, limit: number): Promise<DeliveryLogEntry[]> {
    const entries: DeliveryLogEntry[] = [];
    // Attempts are appended in time order: newest last.
    for (let i = this.attempts.length - 1; i >= 0 && entries.length < limit; i -= 1) {
      const attempt = this.attempts[i]!;
      const delivery = this.deliveryRows.get(attempt.deliveryId);
      if (delivery?.endpointId !== endpointId) continue;
      const message = this.messages.get(delivery.messageId)!;
      entries.push({
        messageId: message.id, type: message.type, attempt: delivery.earlierAttempts + attempt.attempt, resend: delivery.resend, at: attempt.at,
        status: attempt.status, error: attempt.error, durationMs: attempt.durationMs,
      });
    }
    return Promise.resolve(entries);
  }

  resend(messageId: string, endpointId: string, now: Date): Promise<boolean> {
    const message = this.messages.get(messageId);
    const endpoint = this.endpoints.held(endpointId);
    if (message === undefined || endpoint === undefined || endpoint.partnerId !== message.partnerId) return Promise.resolve(false);
    const pending = [...this.deliveryRows.values()].find((d) => d.messageId === messageId && d.endpointId === endpointId && d.state === 'pending');
    if (pending === undefined) this.addDelivery(messageId, endpointId, now, true);
    else if (pending.nextAttemptAt > now) pending.nextAttemptAt = now;
    return Promise.resolve(true);
  }

  failingSince(endpointId: string): Promise<Date | null> {
    let since: Date | null = null;
    // Attempts are appended in time order: walk back from the newest to the newest delivered one.
    for (let i = this.attempts.length - 1; i >= 0; i -= 1) {
      const attempt = this.attempts[i]!;
      if (this.deliveryRows.get(attempt.deliveryId)?.endpointId !== endpointId) continue;
      if (verdictOf(attempt.status) === 'delivered') break;
      since = attempt.at;
    }
    return Promise.resolve(since);
  }

  prune(before: Date): Promise<number> {
    const kept = this.attempts.filter((attempt) => attempt.at >= before);
    const pruned = this.attempts.length - kept.length;
    this.attempts = kept;
    // A message goes once nothing waits for it and the log holds none of its attempts.
    const logged = new Set(kept.map((attempt) => attempt.deliveryId));
    const deliveriesOf = new Map<string, Delivery[]>();
    for (const delivery of this.deliveryRows.values()) {
      const its = deliveriesOf.get(delivery.messageId);
      if (its === undefined) deliveriesOf.set(delivery.messageId, [delivery]);
      else its.push(delivery);
    }
    for (const [id, message] of this.messages) {
      const its = deliveriesOf.get(id) ?? [];
      if (message.createdAt >= before || its.some((d) => d.state === 'pending' || logged.has(d.id))) continue;
      this.messages.delete(id);
      for (const delivery of its) this.deliveryRows.delete(delivery.id);
    }
    return Promise.resolve(pruned);
  }

  private addDelivery(messageId: string, endpointId: string, due: Date, resend = false): void {
    // A new message has no earlier deliveries; a resend's earlier ones are done, their attempts all made.
    let earlierAttempts = 0;
    if (resend) for (const d of this.deliveryRows.values()) if (d.messageId === messageId && d.endpointId === endpointId) earlierAttempts += d.attempts;
    const id = this.nextDelivery++;
    this.deliveryRows.set(id, { id, messageId, endpointId, attempts: 0, earlierAttempts, resend, state: 'pending', nextAttemptAt: due, claim: null });
  }
}
