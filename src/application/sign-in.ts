import { AdminError, SIGN_IN_FAILED_MESSAGE } from '../domain/admin-errors.js';
import {
  MAX_EMAIL_LENGTH, normalizeEmail, SIGN_IN_FAILURE_WINDOW_MS, SIGN_IN_FAILURES_TO_LOCK, SIGN_IN_LOCK_MS,
} from '../domain/admin.js';
import { dummyPasswordHash, MAX_PASSWORD_LENGTH, verifyPassword } from '../domain/password.js';
import { startSession, type StartedSession } from './admin-session-start.js';
import type { AdminAccounts } from './ports/admin-accounts.js';
import type { AdminSessions } from './ports/admin-sessions.js';
import type { AuditLog } from './ports/audit-log.js';
import type { Clock } from './ports/clock.js';
import type { SignInThrottle } from './ports/sign-in-throttle.js';

/**
 * Signs an admin in with email and password. A wrong email and a wrong password get the same
 * answer, after the same work (an unknown email is checked against a dummy hash). Five failures
 * for one email within 15 minutes lock it for 15 minutes, whether or not an admin has it.
 */
export class SignIn {
  constructor(
    private readonly accounts: AdminAccounts,
    private readonly sessions: AdminSessions,
    private readonly throttle: SignInThrottle,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  async execute(input: { email: string; password: string; replacingSession?: string }): Promise<StartedSession> {
    const email = normalizeEmail(input.email).slice(0, MAX_EMAIL_LENGTH);
    const now = this.clock.now();
    const lockedUntil = await this.throttle.lockedUntil(email);
    if (lockedUntil !== null && lockedUntil.getTime() > now) throw locked(lockedUntil.getTime() - now);
    const account = await this.accounts.findByEmail(email);
    const fits = input.password.length <= MAX_PASSWORD_LENGTH;
    const matches = fits && (await verifyPassword(input.password, account?.passwordHash ?? await dummyPasswordHash()));
    const at = new Date(now);
    if (account === null || !matches) {
      await this.audit.record({ at, partnerId: account?.partnerId ?? null, adminEmail: email, action: 'admin.sign_in_failed', keyId: null });
      const failures = await this.throttle.recordFailure(email, at, new Date(now - SIGN_IN_FAILURE_WINDOW_MS));
      if (failures >= SIGN_IN_FAILURES_TO_LOCK) await this.throttle.lock(email, new Date(now + SIGN_IN_LOCK_MS));
      throw new AdminError('sign_in_failed', SIGN_IN_FAILED_MESSAGE);
    }
    await this.throttle.clear(email);
    await this.audit.record({ at, partnerId: account.partnerId, adminEmail: account.email, action: 'admin.signed_in', keyId: null });
    return startSession(this.sessions, account, at, input.replacingSession);
  }
}

function locked(remainingMs: number): AdminError {
  const minutes = Math.max(1, Math.ceil(remainingMs / 60_000));
  return new AdminError('sign_in_locked', `Too many failed sign-ins for this email. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`);
}
