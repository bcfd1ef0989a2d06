import { AdminError, SIGN_IN_FAILED_MESSAGE, signInBusy, signInLocked, signInThrottled, signInThrottledAtOnce } from '../../domain/admin-errors.js';
import { addressGroup } from '../../domain/address-group.js';
import {
  MAX_EMAIL_LENGTH, normalizeEmail, SIGN_IN_ADDRESS_ALLOWANCE, SIGN_IN_FAILURE_WINDOW_MS, SIGN_IN_FAILURES_TO_LOCK, SIGN_IN_LOCK_MS,
  type AdminAccount, type AttemptAllowance,
} from '../../domain/admin.js';
import { checkSignInPassword } from '../../domain/password.js';
import { startSession, type StartedSession } from './admin-session-start.js';
import type { PasswordHashGate } from './password-hash-gate.js';
import type { AdminAccounts } from './admin-accounts.js';
import type { AdminSessions } from './admin-sessions.js';
import type { AuditLog } from './audit-log.js';
import type { Clock } from '../common/clock.js';
import type { SignInAddressBudget } from './sign-in-address-budget.js';
import type { SignInThrottle } from './sign-in-throttle.js';

/**
 * Signs an admin in with email and password. A wrong email and a wrong password get the same
 * answer, after the same work (an unknown email is checked against a dummy hash). Five failures
 * for one email within 15 minutes lock it for 15 minutes, whether or not an admin has it.
 *
 * Before any of that, the client's address (an IPv4 address, an IPv6 /64) must have attempts left
 * in its allowance: each attempt takes one, and a successful one gives it back. Taken before the
 * password is hashed, so a burst of concurrent attempts from one address gets no more hashes than
 * the allowance; and at most `atOnce` of an address's attempts are under way together, so one
 * address never fills the queue at the gate every hashing use case shares.
 */
export class SignIn {
  constructor(
    private readonly accounts: AdminAccounts,
    private readonly sessions: AdminSessions,
    private readonly throttle: SignInThrottle,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly addresses: SignInAddressBudget,
    private readonly hashes: PasswordHashGate,
    private readonly addressAllowance: AttemptAllowance = SIGN_IN_ADDRESS_ALLOWANCE,
  ) {}

  /** `address` is the client's IP address as the adapter resolved it (behind trusted proxies, the one they name). */
  async execute(input: { email: string; password: string; address: string; replacingSession?: string }): Promise<StartedSession> {
    const now = this.clock.now();
    const group = addressGroup(input.address);
    const reservation = this.addresses.reserve(group, now, this.addressAllowance);
    if (reservation.refused === 'at_once') throw signInThrottledAtOnce();
    if (!reservation.granted) throw signInThrottled(reservation.windowEndsAt - now);
    let account: AdminAccount;
    try {
      account = await this.verify(normalizeEmail(input.email).slice(0, MAX_EMAIL_LENGTH), input.password, now);
    } catch (error) {
      // Busy is the server's refusal, not a failure: no password was tried.
      if (error instanceof AdminError && error.code === 'sign_in_busy') this.addresses.refund(group, reservation.windowEndsAt);
      throw error;
    } finally {
      this.addresses.ended(group);
    }
    this.addresses.refund(group, reservation.windowEndsAt);
    const at = new Date(now);
    await this.throttle.clear(account.email);
    await this.audit.record({ at, partnerId: account.partnerId, adminEmail: account.email, action: 'admin.signed_in', keyId: null });
    return startSession(this.sessions, account, at, input.replacingSession);
  }

  /** The account the password opens, or a refusal. */
  private async verify(email: string, password: string, now: number): Promise<AdminAccount> {
    const lockedUntil = await this.throttle.lockedUntil(email);
    if (lockedUntil !== null && lockedUntil.getTime() > now) throw signInLocked(lockedUntil.getTime() - now);
    const account = await this.accounts.findByEmail(email);
    const at = new Date(now);
    const { failures, matches } = await this.hashes.run(async () => {
      // Counted as a failure before the hash and forgotten on success, so concurrent attempts for one email
      // cannot all pass the lock; and an email there is no room to count is not tried at all.
      const counted = await this.throttle.recordFailure(email, at, new Date(now - SIGN_IN_FAILURE_WINDOW_MS));
      if (counted === 'full') throw signInBusy();
      if (counted > SIGN_IN_FAILURES_TO_LOCK) return { failures: counted, matches: false };
      // A lock forgets the failures before it, so an attempt that passed the check above and was
      // counted after another attempt locked the email counts afresh: the lock, read after counting, stops it.
      const locked = await this.throttle.lockedUntil(email);
      if (locked !== null && locked.getTime() > now) throw signInLocked(locked.getTime() - now);
      return { failures: counted, matches: await checkSignInPassword(password, account?.passwordHash ?? null) };
    });
    if (failures > SIGN_IN_FAILURES_TO_LOCK) {
      await this.throttle.lock(email, new Date(now + SIGN_IN_LOCK_MS));
      throw signInLocked(SIGN_IN_LOCK_MS);
    }
    if (account === null || !matches) {
      // Only an admin's own log is ever read: a failure for an email no admin has is the request log's to tell.
      if (account !== null) await this.audit.record({ at, partnerId: account.partnerId, adminEmail: email, action: 'admin.sign_in_failed', keyId: null });
      if (failures >= SIGN_IN_FAILURES_TO_LOCK) await this.throttle.lock(email, new Date(now + SIGN_IN_LOCK_MS));
      throw new AdminError('sign_in_failed', SIGN_IN_FAILED_MESSAGE);
    }
    return account;
  }
}
