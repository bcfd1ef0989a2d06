import { AdminError } from '../../domain/admin-errors.js';
import { hashToken, randomHex } from '../../domain/admin.js';
import { checkNewPassword, hashPassword } from '../../domain/password.js';
import { startSession, type StartedSession } from './admin-session-start.js';
import { CheckInvitation, INVALID_INVITATION_MESSAGE } from './check-invitation.js';
import type { PasswordHashGate } from './password-hash-gate.js';
import type { AdminAccounts } from './admin-accounts.js';
import type { AdminSessions } from './admin-sessions.js';
import type { AuditLog } from './audit-log.js';
import type { Clock } from '../common/clock.js';
import type { Invitations } from './invitations.js';

/** The invitee chooses a password: the account is created, the invitation used up, and the admin signed in. */
export class AcceptInvitation {
  private readonly check: CheckInvitation;

  constructor(
    private readonly invitations: Invitations,
    private readonly accounts: AdminAccounts,
    private readonly sessions: AdminSessions,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    /** The gate sign-in hashes at too: the process's hashing is bounded as a whole. */
    private readonly hashes: PasswordHashGate,
  ) {
    this.check = new CheckInvitation(invitations, clock);
  }

  async execute(input: { token: string; password: string; confirmation: string; replacingSession?: string }): Promise<StartedSession> {
    const invitation = await this.check.execute({ token: input.token });
    // The password is checked before the invitation is used, so a refused one can be tried again.
    checkNewPassword(input.password, input.confirmation);
    if ((await this.accounts.findByEmail(invitation.email)) !== null) throw new AdminError('admin_exists', `an admin with email ${invitation.email} exists already`);
    const passwordHash = await this.hashes.run(() => hashPassword(input.password));
    const now = new Date(this.clock.now());
    if (!(await this.invitations.use(hashToken(input.token), now))) throw new AdminError('invalid_invitation', INVALID_INVITATION_MESSAGE);
    const account = { id: randomHex(12), partnerId: invitation.partnerId, email: invitation.email, passwordHash, createdAt: now };
    if (!(await this.accounts.create(account))) throw new AdminError('admin_exists', `an admin with email ${invitation.email} exists already`);
    await this.audit.record({ at: now, partnerId: account.partnerId, adminEmail: account.email, action: 'admin.signed_in', keyId: null });
    return startSession(this.sessions, account, now, input.replacingSession);
  }
}
