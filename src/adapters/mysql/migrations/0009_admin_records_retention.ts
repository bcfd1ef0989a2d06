import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The portal's records are pruned by age (failures out of their window, ended locks, audit events
 * past their retention): each by an index on its time, so a prune reads and locks only what it
 * deletes. Failed sign-ins for emails no admin has are no longer audited: the ones written before
 * (partner_id null) were never shown to anyone, and go.
 */
export const adminRecordsRetention: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`alter table admin_sign_in_failures add key if not exists admin_sign_in_failures_age (failed_at)`.execute(db);
    await sql`alter table admin_sign_in_locks add key if not exists admin_sign_in_locks_until (locked_until)`.execute(db);
    await sql`alter table audit_events add key if not exists audit_events_age (at)`.execute(db);
    await sql`delete from audit_events where partner_id is null`.execute(db);
  },
};
