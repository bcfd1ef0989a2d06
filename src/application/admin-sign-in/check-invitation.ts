import { AdminError } from '../../domain/admin-errors.js';
import { hashToken, type Invitation } from '../../domain/admin.js';
import type { Clock } from '../common/clock.js';
import type { Invitations } from './invitations.js';

export const INVALID_INVITATION_MESSAGE = 'This invitation is not valid: it has expired or has been used. Ask for a new one.';

/** The invitation behind a token, if it can still be used; one answer for unknown, used and expired. */
export class CheckInvitation {
  constructor(
    private readonly invitations: Invitations,
    private readonly clock: Clock,
  ) {}

  async execute(input: { token: string }): Promise<Invitation> {
    const invitation = await this.invitations.find(hashToken(input.token));
    if (invitation === null || invitation.usedAt !== null || invitation.expiresAt.getTime() <= this.clock.now()) {
      throw new AdminError('invalid_invitation', INVALID_INVITATION_MESSAGE);
    }
    return invitation;
  }
}
