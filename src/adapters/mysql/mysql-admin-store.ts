import { sql, type Kysely } from 'kysely';
import type { AdminAccounts } from '../../application/admin-sign-in/admin-accounts.js';
import type { AdminSessions } from '../../application/admin-sign-in/admin-sessions.js';
import type { AuditLog } from '../../application/admin-sign-in/audit-log.js';
import type { Invitations } from '../../application/admin-sign-in/invitations.js';
import type { SignInThrottle } from '../../application/admin-sign-in/sign-in-throttle.js';
import type { AdminAccount, AdminSession, AuditAction, AuditEvent, Invitation } from '../../domain/admin.js';
import type { Database } from './database.js';

/** Rows one pruning statement deletes at most: each holds its locks briefly, however much has piled up. */
const PRUNE_BATCH_ROWS = 5_000;

/** MariaDB's code for a duplicate key. */
const DUPLICATE_ENTRY = 'ER_DUP_ENTRY';

function isDuplicate(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === DUPLICATE_ENTRY;
}

/** The portal's state in MySQL, one adapter per port, over one handle: every instance sees the same sessions, locks and log. */
export interface MysqlAdminStore {
  readonly accounts: AdminAccounts;
  readonly invitations: Invitations;
  readonly sessions: AdminSessions;
  readonly throttle: SignInThrottle;
  readonly audit: AuditLog;
}

export function mysqlAdminStore(db: Kysely<Database>): MysqlAdminStore {
  return {
    accounts: new MysqlAdminAccounts(db),
    invitations: new MysqlInvitations(db),
    sessions: new MysqlAdminSessions(db),
    throttle: new MysqlSignInThrottle(db),
    audit: new MysqlAuditLog(db),
  };
}

export class MysqlAdminAccounts implements AdminAccounts {
  constructor(private readonly db: Kysely<Database>) {}

  async findByEmail(email: string): Promise<AdminAccount | null> {
    const row = await this.db.selectFrom('partner_admins').selectAll().where('email', '=', email).executeTakeFirst();
    return row === undefined ? null : { id: row.id, partnerId: row.partner_id, email: row.email, passwordHash: row.password_hash, createdAt: row.created_at };
  }

  async create(account: AdminAccount): Promise<boolean> {
    try {
      await this.db.insertInto('partner_admins').values({
        id: account.id, partner_id: account.partnerId, email: account.email, password_hash: account.passwordHash, created_at: account.createdAt,
      }).execute();
      return true;
    } catch (error) {
      if (isDuplicate(error)) return false;
      throw error;
    }
  }
}

export class MysqlInvitations implements Invitations {
  constructor(private readonly db: Kysely<Database>) {}

  async save(invitation: Invitation): Promise<void> {
    await this.db.insertInto('admin_invitations').values({
      token_hash: invitation.tokenHash, partner_id: invitation.partnerId, email: invitation.email,
      created_at: invitation.createdAt, expires_at: invitation.expiresAt, used_at: invitation.usedAt,
    }).execute();
  }

  async find(tokenHash: string): Promise<Invitation | null> {
    const row = await this.db.selectFrom('admin_invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return row === undefined ? null : {
      tokenHash: row.token_hash, partnerId: row.partner_id, email: row.email, createdAt: row.created_at, expiresAt: row.expires_at, usedAt: row.used_at,
    };
  }

  async use(tokenHash: string, at: Date): Promise<boolean> {
    // One conditional update: of two requests racing with the same token, one changes the row.
    const result = await this.db.updateTable('admin_invitations').set({ used_at: at })
      .where('token_hash', '=', tokenHash).where('used_at', 'is', null).where('expires_at', '>', at)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }
}

export class MysqlAdminSessions implements AdminSessions {
  constructor(private readonly db: Kysely<Database>) {}

  async create(session: AdminSession): Promise<void> {
    await this.db.insertInto('admin_sessions').values({
      id_hash: session.idHash, admin_id: session.adminId, partner_id: session.partnerId, email: session.email,
      csrf_token: session.csrfToken, created_at: session.createdAt, last_seen_at: session.lastSeenAt,
    }).execute();
  }

  async find(idHash: string): Promise<AdminSession | null> {
    const row = await this.db.selectFrom('admin_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
    return row === undefined ? null : {
      idHash: row.id_hash, adminId: row.admin_id, partnerId: row.partner_id, email: row.email,
      csrfToken: row.csrf_token, createdAt: row.created_at, lastSeenAt: row.last_seen_at,
    };
  }

  async touch(idHash: string, lastSeenAt: Date): Promise<void> {
    await this.db.updateTable('admin_sessions').set({ last_seen_at: lastSeenAt }).where('id_hash', '=', idHash).execute();
  }

  async delete(idHash: string): Promise<void> {
    await this.db.deleteFrom('admin_sessions').where('id_hash', '=', idHash).execute();
  }
}

export class MysqlSignInThrottle implements SignInThrottle {
  constructor(private readonly db: Kysely<Database>) {}

  async lockedUntil(email: string): Promise<Date | null> {
    const row = await this.db.selectFrom('admin_sign_in_locks').select('locked_until').where('email', '=', email).executeTakeFirst();
    return row?.locked_until ?? null;
  }

  /** Never 'full': the table holds only failures that count (dropped here and by `prune`), and the disk has room for them. */
  async recordFailure(email: string, at: Date, since: Date): Promise<number> {
    // Failures older than the window are of no use to anyone: dropped as new ones come.
    await this.db.deleteFrom('admin_sign_in_failures').where('email', '=', email).where('failed_at', '<=', since).execute();
    await this.db.insertInto('admin_sign_in_failures').values({ email, failed_at: at }).execute();
    const row = await this.db.selectFrom('admin_sign_in_failures').select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('email', '=', email).where('failed_at', '>', since).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async lock(email: string, until: Date): Promise<void> {
    // The lock first: a failure counted afresh once the failures are gone then finds it (SignIn reads it after counting).
    await sql`insert into admin_sign_in_locks (email, locked_until) values (${email}, ${until})
      on duplicate key update locked_until = values(locked_until)`.execute(this.db);
    await this.db.deleteFrom('admin_sign_in_failures').where('email', '=', email).execute();
  }

  async clear(email: string): Promise<void> {
    await this.db.deleteFrom('admin_sign_in_failures').where('email', '=', email).execute();
    await this.db.deleteFrom('admin_sign_in_locks').where('email', '=', email).execute();
  }

  async prune(since: Date, now: Date): Promise<void> {
    await inBatches(() => this.db.deleteFrom('admin_sign_in_failures').where('failed_at', '<=', since).limit(PRUNE_BATCH_ROWS).executeTakeFirst());
    await inBatches(() => this.db.deleteFrom('admin_sign_in_locks').where('locked_until', '<=', now).limit(PRUNE_BATCH_ROWS).executeTakeFirst());
  }
}

export class MysqlAuditLog implements AuditLog {
  constructor(private readonly db: Kysely<Database>) {}

  async record(event: AuditEvent): Promise<void> {
    await this.db.insertInto('audit_events').values({
      at: event.at, partner_id: event.partnerId, admin_email: event.adminEmail, action: event.action, key_id: event.keyId,
      endpoint_id: event.endpointId ?? null,
    }).execute();
  }

  async list(partnerId: string, limit: number): Promise<AuditEvent[]> {
    const rows = await this.db.selectFrom('audit_events').select(['at', 'admin_email', 'action', 'key_id', 'endpoint_id'])
      .where('partner_id', '=', partnerId).orderBy('id', 'desc').limit(limit).execute();
    return rows.map((row) => ({
      at: row.at, partnerId, adminEmail: row.admin_email, action: row.action as AuditAction, keyId: row.key_id,
      ...(row.endpoint_id === null ? {} : { endpointId: row.endpoint_id }),
    }));
  }

  async prune(before: Date): Promise<void> {
    await inBatches(() => this.db.deleteFrom('audit_events').where('at', '<', before).limit(PRUNE_BATCH_ROWS).executeTakeFirst());
  }
}

/** Runs a limited delete until it deletes less than a batch. */
async function inBatches(deleteBatch: () => Promise<{ numDeletedRows: bigint }>): Promise<void> {
  for (;;) {
    if ((await deleteBatch()).numDeletedRows < BigInt(PRUNE_BATCH_ROWS)) return;
  }
}
