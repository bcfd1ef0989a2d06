import { encodeCursor, type CursorKey } from '../../domain/changes.js';
import { catalogChangedMessage, webhookBody, type ChangeTally } from '../../domain/webhook-messages.js';
import { newWebhookMessageId } from '../../domain/webhook-signature.js';
import type { OutboxMessage } from './webhook-outbox.js';

/** What queuing an import's messages needs of its unit of work: they land with the import, or not at all. */
export interface ImportMessageSession {
  /** Ids of the partner's enabled endpoints, as the import's unit of work sees them. */
  enabledWebhookEndpoints(partnerId: string): Promise<string[]>;
  /** Stores the messages with a pending delivery per endpoint, inside the import's unit of work. */
  queueWebhookMessages(messages: readonly OutboxMessage[]): Promise<void>;
}

/**
 * The rule of an import's messages: a partner whose catalog it changed gets one `catalog.changed`
 * message, to each of its enabled endpoints, counting and listing exactly the changes the feed
 * lists for it, with the feed's cursor from just before it. Nothing changed, or no enabled
 * endpoint, and nothing is queued.
 */
export class CatalogChangedMessages {
  constructor(
    private readonly cursorKey: CursorKey,
    /** The import's trace context, carried by each message for its deliveries' spans to link to; null when the import is not traced. */
    private readonly traceparent: string | null = null,
  ) {}

  async queue(session: ImportMessageSession, input: {
    readonly partnerId: string;
    /** The partner's feed position before the import wrote any of its changes. */
    readonly positionBefore: number;
    readonly changes: ChangeTally;
    readonly at: Date;
  }): Promise<void> {
    const { partnerId, changes, at } = input;
    if (changes.count === 0) return;
    const endpointIds = await session.enabledWebhookEndpoints(partnerId);
    if (endpointIds.length === 0) return;
    const cursor = encodeCursor(this.cursorKey, partnerId, input.positionBefore);
    const body = webhookBody(catalogChangedMessage({ at, cursor, changes }));
    await session.queueWebhookMessages([{ id: newWebhookMessageId(), partnerId, type: 'catalog.changed', body, createdAt: at, endpointIds, traceparent: this.traceparent }]);
  }
}
