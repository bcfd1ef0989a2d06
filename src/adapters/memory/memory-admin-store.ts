import type { AdminAccounts } from '../../application/admin-sign-in/admin-accounts.js';
import type { AdminSessions } from '../../application/admin-sign-in/admin-sessions.js';
import type { AuditLog } from '../../application/admin-sign-in/audit-log.js';
import type { Invitations } from '../../application/admin-sign-in/invitations.js';
import type { SignInThrottle } from '../../application/admin-sign-in/sign-in-throttle.js';
import type { AdminAccount, AdminSession, AuditEvent, Invitation } from '../../domain/admin.js';

/** Bounds on what an anonymous client can make grow. */
export interface MemoryAdminStoreLimits {
  /** Emails with failures or a lock; full, a new email is refused rather than a live one forgotten. */
  readonly maxThrottledEmails: number;
  /** Audit events and sessions: the oldest go first. */
  readonly maxAuditEvents: number;
  readonly maxSessions: number;
}

const DEFAULT_LIMITS: MemoryAdminStoreLimits = { maxThrottledEmails: 10_000, maxAuditEvents: 10_000, maxSessions: 10_000 };

/** The portal's state held in process, one adapter per port: for the embedded demo and tests; gone when the process stops. */
export interface MemoryAdminStore {
  readonly accounts: AdminAccounts;
  readonly invitations: Invitations;
  readonly sessions: AdminSessions;
  readonly throttle: SignInThrottle;
  readonly audit: AuditLog;
}

export function memoryAdminStore(limits: Partial<MemoryAdminStoreLimits> = {}): MemoryAdminStore {
  const bounds = { ...DEFAULT_LIMITS, ...limits };
  return {
    accounts: new MemoryAdminAccounts(),
    invitations: new MemoryInvitations(),
    sessions: new MemoryAdminSessions(bounds.maxSessions),
    throttle: new MemorySignInThrottle(bounds.maxThrottledEmails),
    audit: new MemoryAuditLog(bounds.maxAuditEvents),
  };
}

export class MemoryAdminAccounts implements AdminAccounts {
  private readonly byEmail = new Map<string, AdminAccount>();

  findByEmail(email: string): Promise<AdminAccount | null> {
    return Promise.resolve(this.byEmail.get(email) ?? null);
  }

  create(account: AdminAccount): Promise<boolean> {
    if (this.byEmail.has(account.email)) return Promise.resolve(false);
    this.byEmail.set(account.email, account);
    return Promise.resolve(true);
  }
}

export class MemoryInvitations implements Invitations {
  private readonly byHash = new Map<string, Invitation>();

  save(invitation: Invitation): Promise<void> {
    this.byHash.set(invitation.tokenHash, invitation);
    return Promise.resolve();
  }

  find(tokenHash: string): Promise<Invitation | null> {
    return Promise.resolve(this.byHash.get(tokenHash) ?? null);
  }

  use(tokenHash: string, at: Date): Promise<boolean> {
    const invitation = this.byHash.get(tokenHash);
    if (invitation === undefined || invitation.usedAt !== null || invitation.expiresAt <= at) return Promise.resolve(false);
    this.byHash.set(tokenHash, { ...invitation, usedAt: at });
    return Promise.resolve(true);
  }
}

export class MemoryAdminSessions implements AdminSessions {
  private readonly byHash = new Map<string, AdminSession>();

  constructor(private readonly max: number) {}

  create(session: AdminSession): Promise<void> {
    bounded(this.byHash, this.max).set(session.idHash, session);
    return Promise.resolve();
  }

  find(idHash: string): Promise<AdminSession | null> {
    return Promise.resolve(this.byHash.get(idHash) ?? null);
  }

  touch(idHash: string, lastSeenAt: Date): Promise<void> {
    const session = this.byHash.get(idHash);
    if (session !== undefined) this.byHash.set(idHash, { ...session, lastSeenAt });
    return Promise.resolve();
  }

  delete(idHash: string): Promise<void> {
    this.byHash.delete(idHash);
    return Promise.resolve();
  }
}

/**
 * Failures and locks per email, in as many entries as `max` allows between them. Full, it first
 * forgets what has ended, then refuses to count a new email ('full'): a flood of other emails
 * never pushes a live lock or a live failure out.
 */
export class MemorySignInThrottle implements SignInThrottle {
  // Kept in the order they were last written, so what has ended is at the front (with a clock that goes forward).
  private readonly failures = new Map<string, Date[]>();
  private readonly locks = new Map<string, Date>();

  constructor(private readonly max: number) {}

  lockedUntil(email: string): Promise<Date | null> {
    return Promise.resolve(this.locks.get(email) ?? null);
  }

  recordFailure(email: string, at: Date, since: Date): Promise<number | 'full'> {
    const known = this.failures.get(email);
    if (known === undefined && !this.makeRoom(since, at)) return Promise.resolve('full');
    const recent = (known ?? []).filter((time) => time > since);
    recent.push(at);
    this.failures.delete(email);
    this.failures.set(email, recent);
    return Promise.resolve(recent.length);
  }

  lock(email: string, until: Date): Promise<void> {
    this.failures.delete(email);
    this.locks.delete(email);
    this.locks.set(email, until);
    return Promise.resolve();
  }

  clear(email: string): Promise<void> {
    this.failures.delete(email);
    this.locks.delete(email);
    return Promise.resolve();
  }

  prune(since: Date, now: Date): Promise<void> {
    for (const [email, times] of this.failures) {
      const recent = times.filter((time) => time > since);
      if (recent.length === 0) this.failures.delete(email);
      else this.failures.set(email, recent);
    }
    for (const [email, until] of this.locks) if (until <= now) this.locks.delete(email);
    return Promise.resolve();
  }

  /** Whether there is room for one more email, after forgetting the oldest entries that have ended. */
  private makeRoom(since: Date, now: Date): boolean {
    if (this.failures.size + this.locks.size < this.max) return true;
    dropWhile(this.failures, (times) => times.every((time) => time <= since));
    dropWhile(this.locks, (until) => until <= now);
    return this.failures.size + this.locks.size < this.max;
  }
}

export class MemoryAuditLog implements AuditLog {
  private readonly events: AuditEvent[] = [];

  constructor(private readonly max: number) {}

  record(event: AuditEvent): Promise<void> {
    this.events.push(event);
    if (this.events.length > this.max) this.events.shift();
    return Promise.resolve();
  }

  list(partnerId: string, limit: number): Promise<AuditEvent[]> {
    const mine: AuditEvent[] = [];
    for (let i = this.events.length - 1; i >= 0 && mine.length < limit; i -= 1) {
      const event = this.events[i]!;
      if (event.partnerId === partnerId) mine.push(event);
    }
    return Promise.resolve(mine);
  }

  prune(before: Date): Promise<void> {
    const kept = this.events.filter((event) => event.at >= before);
    this.events.splice(0, this.events.length, ...kept);
    return Promise.resolve();
  }
}

/** Deletes the map's first entries while they are `ended`: it stops at the first that is not. */
function dropWhile<K, V>(map: Map<K, V>, ended: (value: V) => boolean): void {
  for (const [key, value] of map) {
    if (!ended(value)) return;
    map.delete(key);
  }
}

/** The map, with its oldest entries dropped if it is full. */
function bounded<K, V>(map: Map<K, V>, max: number): Map<K, V> {
  while (map.size >= max) {
    const oldest = map.keys().next();
    if (oldest.done === true) break;
    map.delete(oldest.value);
  }
  return map;
}
