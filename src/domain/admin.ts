import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long an invitation may be used, once. */
export const INVITATION_LIFETIME_MS = 72 * 60 * 60 * 1000;
/** A signed-in session ends after this long without a request. */
export const SESSION_IDLE_MS = 30 * 60 * 1000;
/** And after this long in any case: a stolen cookie does not live for ever. */
export const SESSION_MAX_AGE_MS = 12 * 60 * 60 * 1000;
/** A session's last request is written at most this often, not on every page. */
export const SESSION_TOUCH_INTERVAL_MS = 60 * 1000;
/** Failed sign-ins for one email within `SIGN_IN_FAILURE_WINDOW_MS` that lock it. */
export const SIGN_IN_FAILURES_TO_LOCK = 5;
export const SIGN_IN_FAILURE_WINDOW_MS = 15 * 60 * 1000;
export const SIGN_IN_LOCK_MS = 15 * 60 * 1000;

/** So many attempts per window, counted from the first. */
export interface AttemptAllowance {
  readonly attempts: number;
  readonly windowMs: number;
  /** Attempts of one address under way at once: more would queue at the hashes ahead of everyone else's. */
  readonly atOnce: number;
}

/**
 * Sign-in attempts one client address (an IPv4 address, an IPv6 /64) may make in 15 minutes, a
 * successful one given back: enough for an office behind one address to mistype, while a flood
 * from it stops after 20 hashes, not thousands, whatever emails it tries.
 */
export const SIGN_IN_ADDRESS_ALLOWANCE: AttemptAllowance = { attempts: 20, windowMs: 15 * 60 * 1000, atOnce: 2 };
/** A refusal for want of room (hash queue full, too many emails being tracked) passes in about this long. */
export const SIGN_IN_BUSY_RETRY_AFTER_SECONDS = 2;
/**
 * How long the audit log keeps an event: a year's review with a month to spare. Failures and locks
 * are kept only while they count (`SIGN_IN_FAILURE_WINDOW_MS`, `SIGN_IN_LOCK_MS`).
 */
export const AUDIT_RETENTION_MS = 400 * 24 * 60 * 60 * 1000;
/** How often whoever runs the portal forgets what has run out (`PruneAdminRecords`). */
export const ADMIN_RECORDS_PRUNE_INTERVAL_MS = 10 * 60 * 1000;
/** Longest email kept; RFC 5321 allows no more. */
export const MAX_EMAIL_LENGTH = 254;
/** Key labels fit the column that holds them. */
export const MAX_KEY_LABEL_LENGTH = 255;

/** A partner admin's account. The password is held only as its slow salted hash. */
export interface AdminAccount {
  readonly id: string;
  readonly partnerId: string;
  readonly email: string;
  readonly passwordHash: string;
  readonly createdAt: Date;
}

/** An invitation, known by the SHA-256 of its token; the token itself is handed out once. */
export interface Invitation {
  readonly tokenHash: string;
  readonly partnerId: string;
  readonly email: string;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly usedAt: Date | null;
}

/** A server-side session, known by the SHA-256 of its id; the id lives only in the admin's cookie. */
export interface AdminSession {
  readonly idHash: string;
  readonly adminId: string;
  readonly partnerId: string;
  readonly email: string;
  /** Every form of the session carries it; a POST without it changes nothing. */
  readonly csrfToken: string;
  readonly createdAt: Date;
  readonly lastSeenAt: Date;
}

export type AuditAction =
  | 'key.created' | 'key.revoked' | 'key.replaced' | 'admin.signed_in' | 'admin.sign_in_failed'
  | 'webhook.created' | 'webhook.deleted' | 'webhook.secret_rotated' | 'webhook.disabled' | 'webhook.enabled';

/** One line of the audit log: never a key, a hash, a password or a webhook secret. */
export interface AuditEvent {
  readonly at: Date;
  /** Always a partner: the log is read per partner, so a failed sign-in for an email no admin has is not recorded. */
  readonly partnerId: string;
  /** Null when an operator acted from the command line. */
  readonly adminEmail: string | null;
  readonly action: AuditAction;
  readonly keyId: string | null;
  /** The webhook endpoint a `webhook.*` event is about; absent on every other event. */
  readonly endpointId?: string;
}

/** Emails compare without case or surrounding blanks. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** One @ with something either side and no blanks: the invitation itself proves the address. */
export function isPlausibleEmail(email: string): boolean {
  return email.length <= MAX_EMAIL_LENGTH && /^[^\s@]+@[^\s@]+$/.test(email);
}

/** 256 random bits, URL-safe: invitation tokens, session ids, CSRF tokens. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** `bytes` random bytes as lowercase hex: key ids' random part. */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** How tokens are stored: their SHA-256, so a read of the table hands out no session and no invitation. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Compares two secrets in constant time. */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
