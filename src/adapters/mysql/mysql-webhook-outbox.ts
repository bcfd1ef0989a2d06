import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { AttemptError } from '../../application/webhooks/webhook-sender.js';
import type { AttemptRecord, ClaimedDelivery, DeliveryLogEntry, DeliveryNext, ClaimRoom, OutboxMessage, WebhookOutbox } from '../../application/webhooks/webhook-outbox.js';
import type { Database } from './database.js';
import { DatabaseError } from './database-error.js';

/** Bytes of an answer the delivery log keeps, as its column holds them. */
const EXCERPT_BYTES = 1_024;
/** MariaDB's refusal of a row whose foreign key names a row that is not there (any more). */
const NO_REFERENCED_ROW = 'ER_NO_REFERENCED_ROW_2';

/**
 * Writes a message and a pending delivery per endpoint, due at its creation, on `db`: an import
 * passes its own transaction, so the messages commit or roll back with the import.
 */
export async function insertOutboxMessage(db: Kysely<Database> | Transaction<Database>, message: OutboxMessage): Promise<void> {
  await db.insertInto('webhook_messages').values({
    id: message.id, partner_id: message.partnerId, type: message.type, body: message.body, created_at: message.createdAt,
    // Named only when there is one: the column's default is null, and a schema from before it takes the rest.
    ...(message.traceparent == null ? {} : { traceparent: message.traceparent }),
  }).execute();
  if (message.endpointIds.length === 0) return;
  await db.insertInto('webhook_deliveries').values(message.endpointIds.map((endpointId) => ({
    message_id: message.id, endpoint_id: endpointId, state: 'pending' as const, next_attempt_at: message.createdAt, created_at: message.createdAt,
  }))).execute();
}

/** The ids of a partner's enabled endpoints, as `db` sees them. */
export async function enabledEndpointIds(db: Kysely<Database> | Transaction<Database>, partnerId: string): Promise<string[]> {
  const rows = await db.selectFrom('webhook_endpoints').select('id').where('partner_id', '=', partnerId).where('status', '=', 'enabled')
    .orderBy('created_at').orderBy('id').execute();
  return rows.map((row) => row.id);
}

/** Picks a claimer makes at most in one claim when others keep taking what it picked. */
const MAX_CLAIM_ROUNDS = 10;

/** `case <column> when <id> then <n> ... else 0 end`: what a claimer holds of each id, 0 for the others. */
function heldOf(column: 'endpoint_id' | 'partner_id', held: ReadonlyMap<string, number>): RawBuilder<number> {
  const busy = [...held].filter(([, n]) => n > 0);
  return busy.length === 0 ? sql<number>`0` : sql<number>`case ${sql.ref(column)} ${sql.join(busy.map(([id, n]) => sql`when ${id} then ${n}`), sql` `)} else 0 end`;
}

/**
 * The statement that picks up to `limit` due and unclaimed deliveries, without a lock, in turns: each
 * delivery's place in its endpoint's turn (what the claimer holds of the endpoint, then its earliest
 * due first), none beyond `perEndpoint`; then its place in its partner's turn (what the claimer holds
 * of the partner, then its endpoints' first places before any second), none beyond `perPartner`; and
 * every partner's first place before any partner's second. The due rows are read by the
 * (state, next_attempt_at) index, and each one's partner by its endpoint's primary key in a
 * subquery: as a join, the plan could start from the endpoints and read each one's whole log.
 */
export function duePick(
  now: Date, limit: number, room: { readonly perEndpoint: number; readonly perPartner: number },
  held: { readonly endpoints: ReadonlyMap<string, number>; readonly partners: ReadonlyMap<string, number> },
): RawBuilder<{ id: number }> {
  return sql<{ id: number }>`select id from (
      select id, next_attempt_at,
        ${heldOf('partner_id', held.partners)} + row_number() over (partition by partner_id order by endpoint_place, next_attempt_at, id) as partner_place
      from (
        select d.id, d.next_attempt_at, (select e.partner_id from webhook_endpoints e where e.id = d.endpoint_id) as partner_id,
          ${heldOf('endpoint_id', held.endpoints)} + row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.id) as endpoint_place
        from webhook_deliveries d
        where d.state = 'pending' and d.next_attempt_at <= ${now} and (d.claim_expires_at is null or d.claim_expires_at <= ${now})
      ) by_endpoint
      where endpoint_place <= ${room.perEndpoint}
    ) by_partner
    where partner_place <= ${room.perPartner}
    order by partner_place, next_attempt_at, id limit ${limit}`;
}

/** The outbox in MySQL, shared by every instance: a claim is one UPDATE, so two instances never hold one delivery. */
export class MysqlWebhookOutbox implements WebhookOutbox {
  constructor(private readonly db: Kysely<Database>) {}

  enqueue(message: OutboxMessage): Promise<void> {
    return this.db.transaction().execute((trx) => insertOutboxMessage(trx, message));
  }

  async claimDue(now: Date, limit: number, leaseMs: number, room?: ClaimRoom): Promise<ClaimedDelivery[]> {
    const token = randomBytes(16).toString('hex');
    const expiresAt = new Date(now.getTime() + leaseMs);
    const perEndpoint = room?.perEndpoint ?? limit;
    const perPartner = room?.perPartner ?? limit;
    let taken: readonly { endpoint_id: string; partner_id: string }[] = [];
    // A pick takes no lock, so claimers running at once may pick the same rows; the one that loses
    // them picks again from what is left, until it has its fill or nothing due is left unclaimed.
    for (let round = 0; round < MAX_CLAIM_ROUNDS && taken.length < limit; round += 1) {
      const held = { endpoints: new Map(room?.busy ?? []), partners: new Map(room?.busyPartners ?? []) };
      for (const row of taken) {
        held.endpoints.set(row.endpoint_id, (held.endpoints.get(row.endpoint_id) ?? 0) + 1);
        held.partners.set(row.partner_id, (held.partners.get(row.partner_id) ?? 0) + 1);
      }
      const { rows: picked } = await duePick(now, limit - taken.length, { perEndpoint, perPartner }, held).execute(this.db);
      // Every instance looks every WEBHOOK_POLL_MS: a look that finds nothing is this one statement, by the (state, next_attempt_at) index.
      if (picked.length === 0) break;
      // Locks the rows picked by primary key, in key order (so two claimers never deadlock), and takes
      // only those still due and unclaimed: one another claimer took (or took and put off to a later
      // attempt) meanwhile no longer matches, and no delivery is held twice.
      await this.db.updateTable('webhook_deliveries')
        .set({ claim_token: token, claim_expires_at: expiresAt })
        .where('id', 'in', picked.map((row) => row.id))
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('claim_expires_at', 'is', null), eb('claim_expires_at', '<=', now)]))
        .execute();
      taken = await this.db.selectFrom('webhook_deliveries as d').innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .select(['d.endpoint_id', 'e.partner_id']).where('d.claim_token', '=', token).execute();
    }
    if (taken.length === 0) return [];
    const rows = await this.db.selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_messages as m', 'm.id', 'd.message_id')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select([
        'd.id', 'd.attempts', 'd.earlier_attempts', 'd.claim_expires_at', 'm.id as message_id', 'm.type', 'm.body', 'm.created_at', 'm.traceparent',
        'e.id as endpoint_id', 'e.partner_id', 'e.url', 'e.status', 'e.secret', 'e.previous_secret', 'e.previous_secret_until',
      ])
      .where('d.claim_token', '=', token)
      .orderBy('d.next_attempt_at').orderBy('d.id')
      .execute();
    return rows.map((row) => ({
      deliveryId: row.id, claimToken: token, claimExpiresAt: row.claim_expires_at ?? expiresAt, attempts: row.attempts, earlierAttempts: row.earlier_attempts,
      message: { id: row.message_id, type: row.type, body: row.body, createdAt: row.created_at, traceparent: row.traceparent },
      endpoint: {
        id: row.endpoint_id, partnerId: row.partner_id, url: row.url, status: row.status,
        secrets: {
          current: row.secret,
          previous: row.previous_secret === null || row.previous_secret_until === null ? null : { secret: row.previous_secret, until: row.previous_secret_until },
        },
      },
    }));
  }

  recordAttempt(deliveryId: number, claimToken: string, attempt: AttemptRecord, next: DeliveryNext): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const update = trx.updateTable('webhook_deliveries')
        .set((eb) => ({ attempts: eb('attempts', '+', 1), claim_token: null, claim_expires_at: null, state: next.state === 'retry' ? 'pending' : next.state }))
        .where('id', '=', deliveryId).where('claim_token', '=', claimToken).where('state', '=', 'pending');
      const result = await (next.state === 'retry' ? update.set({ next_attempt_at: next.nextAttemptAt }) : update).executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      const delivery = await trx.selectFrom('webhook_deliveries').select(['attempts', 'endpoint_id']).where('id', '=', deliveryId).executeTakeFirstOrThrow();
      await trx.insertInto('webhook_attempts').values({
        delivery_id: deliveryId, endpoint_id: delivery.endpoint_id, attempt: delivery.attempts, at: attempt.at, status: attempt.status,
        error: attempt.error, duration_ms: Math.max(0, Math.round(attempt.durationMs)), excerpt: Buffer.from(attempt.excerpt, 'utf8').subarray(0, EXCERPT_BYTES),
      }).execute();
      return true;
    });
  }

  async pendingCount(): Promise<number> {
    const { n } = await this.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('state', '=', 'pending').executeTakeFirstOrThrow();
    return Number(n);
  }

  async deliveries(endpointId: string, limit: number): Promise<DeliveryLogEntry[]> {
    const rows = await this.db.selectFrom('webhook_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .innerJoin('webhook_messages as m', 'm.id', 'd.message_id')
      .select((eb) => ['m.id', 'm.type', eb('a.attempt', '+', eb.ref('d.earlier_attempts')).as('attempt'), 'd.resend', 'a.at', 'a.status', 'a.error', 'a.duration_ms'])
      .where('a.endpoint_id', '=', endpointId)
      .orderBy('a.at', 'desc').orderBy('a.id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      messageId: row.id, type: row.type, attempt: row.attempt, resend: row.resend === 1, at: row.at, status: row.status, error: row.error as AttemptError | null, durationMs: row.duration_ms,
    }));
  }

  async resend(messageId: string, endpointId: string, now: Date): Promise<boolean> {
    try {
      return await this.resendOnce(messageId, endpointId, now);
    } catch (error) {
      // The message (pruned) or the endpoint (deleted) went between the read and the insert: not found.
      if (error instanceof DatabaseError && error.code === NO_REFERENCED_ROW) return false;
      throw error;
    }
  }

  private resendOnce(messageId: string, endpointId: string, now: Date): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const message = await trx.selectFrom('webhook_messages').select('partner_id').where('id', '=', messageId).executeTakeFirst();
      const endpoint = await trx.selectFrom('webhook_endpoints').select('partner_id').where('id', '=', endpointId).executeTakeFirst();
      if (message === undefined || endpoint === undefined || message.partner_id !== endpoint.partner_id) return false;
      const pending = await trx.selectFrom('webhook_deliveries').select(['id', 'next_attempt_at'])
        .where('message_id', '=', messageId).where('endpoint_id', '=', endpointId).where('state', '=', 'pending').forUpdate().executeTakeFirst();
      if (pending === undefined) {
        // The earlier deliveries are done (delivered or failed): their attempts are all made.
        const { earlier } = await trx.selectFrom('webhook_deliveries').select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('attempts'), eb.lit(0)).as('earlier'))
          .where('message_id', '=', messageId).where('endpoint_id', '=', endpointId).executeTakeFirstOrThrow();
        await trx.insertInto('webhook_deliveries').values({
          message_id: messageId, endpoint_id: endpointId, state: 'pending', next_attempt_at: now, created_at: now, earlier_attempts: Number(earlier), resend: 1,
        }).execute();
      } else if (pending.next_attempt_at > now) {
        await trx.updateTable('webhook_deliveries').set({ next_attempt_at: now }).where('id', '=', pending.id).execute();
      }
      return true;
    });
  }

  async failingSince(endpointId: string): Promise<Date | null> {
    // Both by the (endpoint_id, at) index: the newest 2xx, then the oldest attempt after it.
    const { rows } = await sql<{ since: Date | null }>`select min(a.at) as since from webhook_attempts a
      where a.endpoint_id = ${endpointId} and a.at > coalesce(
        (select max(b.at) from webhook_attempts b where b.endpoint_id = ${endpointId} and b.status between 200 and 299),
        '1000-01-01')`.execute(this.db);
    return rows[0]?.since ?? null;
  }

  prune(before: Date): Promise<number> {
    // One transaction: a reader never finds a message's attempts gone while the message stays.
    return this.db.transaction().execute(async (trx) => {
      const result = await trx.deleteFrom('webhook_attempts').where('at', '<', before).executeTakeFirst();
      // A message goes once nothing waits for it and the log holds none of its attempts; its deliveries
      // go with it (foreign key, on delete cascade).
      await sql`delete from webhook_messages where created_at < ${before} and not exists
        (select 1 from webhook_deliveries d where d.message_id = webhook_messages.id
          and (d.state = 'pending' or exists (select 1 from webhook_attempts a where a.delivery_id = d.id)))`.execute(trx);
      return Number(result.numDeletedRows);
    });
  }
}

