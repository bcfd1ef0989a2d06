/** Stable codes of what a partner admin or an operator may get wrong in the portal's use cases. */
export type AdminErrorCode =
  | 'partner_not_found'
  | 'invalid_email'
  | 'admin_exists'
  | 'invalid_invitation'
  | 'password_too_short'
  | 'password_too_long'
  | 'passwords_differ'
  | 'sign_in_failed'
  | 'sign_in_locked'
  | 'key_not_found'
  | 'key_not_active'
  | 'invalid_label';

/** A refusal the admin may act on; the adapters decide how to show it. */
export class AdminError extends Error {
  constructor(
    readonly code: AdminErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AdminError';
  }
}

/** The one answer to a wrong email and a wrong password, so neither is told apart. */
export const SIGN_IN_FAILED_MESSAGE = 'Email or password is incorrect.';
