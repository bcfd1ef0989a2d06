import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The delivery log numbers a message's attempts at an endpoint across its resends, and marks the
 * attempts of a resend. A resend queues a delivery of its own, whose `attempts` count from 0 for its
 * retry schedule; `earlier_attempts` holds the attempts the message's earlier deliveries to the
 * endpoint had made when it was queued, which the log adds to each attempt's number, and `resend`
 * says a resend queued it. A pair's deliveries never overlap (a resend brings a pending one forward
 * rather than queue a second), so the ones queued before this migration are settled here in id order.
 */
export const attemptsAcrossResends: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // DDL is not transactional: `if not exists` and updates that only set let a migration that failed part-way run again.
    await sql`alter table webhook_deliveries
      add column if not exists earlier_attempts int unsigned not null default 0,
      add column if not exists resend boolean not null default false`.execute(db);
    // Only pairs with more than one delivery have a resend among them: few, read by the (endpoint_id, message_id) index.
    const { rows } = await sql<{ id: number; message_id: string; endpoint_id: string; attempts: number }>`select d.id, d.message_id, d.endpoint_id, d.attempts
      from webhook_deliveries d join (
        select endpoint_id, message_id from webhook_deliveries group by endpoint_id, message_id having count(*) > 1
      ) resent on resent.endpoint_id = d.endpoint_id and resent.message_id = d.message_id
      order by d.endpoint_id, d.message_id, d.id`.execute(db);
    let pair = '';
    let earlier = 0;
    for (const row of rows) {
      const rowPair = `${row.endpoint_id} ${row.message_id}`;
      if (rowPair !== pair) {
        pair = rowPair;
        earlier = row.attempts;
        continue;
      }
      await sql`update webhook_deliveries set earlier_attempts = ${earlier}, resend = true where id = ${row.id}`.execute(db);
      earlier += row.attempts;
    }
  },
};
