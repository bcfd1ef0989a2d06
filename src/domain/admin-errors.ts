import { SIGN_IN_BUSY_RETRY_AFTER_SECONDS } from './admin.js';

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
  | 'sign_in_throttled'
  | 'sign_in_busy'
  | 'key_not_found'
  | 'key_not_active'
  | 'invalid_label';

/** A refusal the admin may act on; the adapters decide how to show it. */
export class AdminError extends Error {
  constructor(
    readonly code: AdminErrorCode,
    message: string,
    /** For a refusal that passes (locked, throttled, busy): whole seconds, at least 1, after which trying again may succeed. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
    this.name = 'AdminError';
  }
}

/** The one answer to a wrong email and a wrong password, so neither is told apart. */
export const SIGN_IN_FAILED_MESSAGE = 'Email or password is incorrect.';

/** The answer when there is no room to try a password now: the hash queue is full, or the lockout table is. */
export function signInBusy(): AdminError {
  return new AdminError('sign_in_busy', 'Signing in is busy. Try again in a few seconds.', SIGN_IN_BUSY_RETRY_AFTER_SECONDS);
}

/** The email is locked for `remainingMs` more. */
export function signInLocked(remainingMs: number): AdminError {
  return waitRefusal('sign_in_locked', 'Too many failed sign-ins for this email.', remainingMs);
}

/** The client's address has used its attempts, for `remainingMs` more. */
export function signInThrottled(remainingMs: number): AdminError {
  return waitRefusal('sign_in_throttled', 'Too many failed sign-ins from your network.', remainingMs);
}

/** The client's address has as many sign-ins under way as it may have at once. */
export function signInThrottledAtOnce(): AdminError {
  return new AdminError('sign_in_throttled', 'Too many sign-ins at once from your network. Try again in a moment.', 1);
}

/** A refusal that passes: the message in whole minutes, for people; the retry in whole seconds, for Retry-After. */
function waitRefusal(code: AdminErrorCode, reason: string, remainingMs: number): AdminError {
  const minutes = Math.max(1, Math.ceil(remainingMs / 60_000));
  const seconds = Math.max(1, Math.ceil(remainingMs / 1000));
  return new AdminError(code, `${reason} Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, seconds);
}
