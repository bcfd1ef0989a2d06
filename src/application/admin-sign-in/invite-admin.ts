import { AdminError } from '../../domain/admin-errors.js';
import { hashToken, INVITATION_LIFETIME_MS, isPlausibleEmail, normalizeEmail, randomToken } from '../../domain/admin.js';
import type { AdminAccounts } from './admin-accounts.js';
import type { ApiKeyAdmin } from '../keys/api-key-admin.js';
import type { Clock } from '../common/clock.js';
import type { Invitations } from './invitations.js';

export interface IssuedInvitation {
  readonly partner: string;
  readonly email: string;
  /** Handed out once, in the invitation URL; only its hash is stored. */
  readonly token: string;
  readonly expiresAt: Date;
}

/** Invites an email to become an admin of the partner (`admins invite`): one use, within 72 hours. */
export class InviteAdmin {
  constructor(
    private readonly partners: Pick<ApiKeyAdmin, 'partnerExists'>,
    private readonly accounts: AdminAccounts,
    private readonly invitations: Invitations,
    private readonly clock: Clock,
  ) {}

  async execute(input: { partnerId: string; email: string }): Promise<IssuedInvitation> {
    const email = normalizeEmail(input.email);
    if (!isPlausibleEmail(email)) throw new AdminError('invalid_email', `${JSON.stringify(input.email)} is not an email address`);
    if (!(await this.partners.partnerExists(input.partnerId))) {
      throw new AdminError('partner_not_found', `no partner with id ${JSON.stringify(input.partnerId)}; import its catalog first`);
    }
    if ((await this.accounts.findByEmail(email)) !== null) throw new AdminError('admin_exists', `an admin with email ${email} exists already`);
    const now = this.clock.now();
    const token = randomToken();
    const expiresAt = new Date(now + INVITATION_LIFETIME_MS);
    await this.invitations.save({ tokenHash: hashToken(token), partnerId: input.partnerId, email, createdAt: new Date(now), expiresAt, usedAt: null });
    return { partner: input.partnerId, email, token, expiresAt };
  }
}
