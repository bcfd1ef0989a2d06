import { toChangeView, type ChangeView } from './changes-view.js';
import type { ProductChange } from './changes.js';

/** A `catalog.changed` message lists its changes only when there are at most this many; past it, the feed does. */
export const MAX_LISTED_CHANGES = 100;

export interface CatalogChangedData {
  readonly changes: number;
  readonly upserted: number;
  readonly deleted: number;
  /** A changes-feed cursor from just before the import: the feed read from it lists every change below. */
  readonly cursor: string;
  /** In the feed's own shape; absent past `MAX_LISTED_CHANGES`. */
  readonly items?: readonly ChangeView[];
}

export interface CatalogChangedMessage {
  readonly type: 'catalog.changed';
  readonly timestamp: string;
  readonly data: CatalogChangedData;
}

export interface WebhookTestMessage {
  readonly type: 'webhook.test';
  readonly timestamp: string;
  readonly data: { readonly endpoint_id: string };
}

export type WebhookMessage = CatalogChangedMessage | WebhookTestMessage;

/**
 * One import's changes to one partner's catalog, as its message needs them: every change counted,
 * and listed only while they fit in a message, so an import of millions holds no list of them.
 */
export class ChangeTally {
  upserted = 0;
  deleted = 0;
  private listed: ProductChange[] | null = [];

  add(change: ProductChange): void {
    if (change.change === 'upserted') this.upserted += 1;
    else this.deleted += 1;
    if (this.listed === null) return;
    if (this.listed.length === MAX_LISTED_CHANGES) this.listed = null;
    else this.listed.push(change);
  }

  get count(): number {
    return this.upserted + this.deleted;
  }

  /** The changes in the order added; null past `MAX_LISTED_CHANGES`. */
  get items(): readonly ProductChange[] | null {
    return this.listed;
  }
}

/** The message of one import that changed a partner's catalog: its changes as the feed lists them. */
export function catalogChangedMessage(input: { readonly at: Date; readonly cursor: string; readonly changes: readonly ProductChange[] | ChangeTally }): CatalogChangedMessage {
  const { cursor } = input;
  let tally = input.changes;
  if (!(tally instanceof ChangeTally)) {
    const changes = tally;
    tally = new ChangeTally();
    for (const change of changes) tally.add(change);
  }
  const data: CatalogChangedData = { changes: tally.count, upserted: tally.upserted, deleted: tally.deleted, cursor };
  const { items } = tally;
  return {
    type: 'catalog.changed',
    timestamp: messageTimestamp(input.at),
    data: items === null ? data : { ...data, items: items.map(toChangeView) },
  };
}

/** The message an admin or operator sends to try an endpoint. */
export function webhookTestMessage(input: { readonly at: Date; readonly endpointId: string }): WebhookTestMessage {
  return { type: 'webhook.test', timestamp: messageTimestamp(input.at), data: { endpoint_id: input.endpointId } };
}

/** The body as sent and signed: written once, never re-serialized between signing and sending. */
export function webhookBody(message: WebhookMessage): string {
  return JSON.stringify(message);
}

/** UTC to the second: `2026-11-24T10:00:00Z`. */
function messageTimestamp(at: Date): string {
  return `${at.toISOString().slice(0, 19)}Z`;
}
