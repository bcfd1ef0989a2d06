import { createCipheriv, createDecipheriv, hash, randomBytes } from 'node:crypto';

export const SESSION_COOKIE = 'pcat_portal_session';
/** Before sign-in there is no session: the sign-in and invitation forms carry a token equal to this cookie's. */
export const FORM_COOKIE = 'pcat_portal_form';
/** What a sealed cookie carries to the one page load that shows it, each under a name and a key of its own. */
export type ShownOnce = 'new-key' | 'webhook-secret';
export const SHOWN_ONCE_COOKIES: Readonly<Record<ShownOnce, string>> = {
  'new-key': 'pcat_portal_new_key',
  'webhook-secret': 'pcat_portal_webhook_secret',
};
/** How long a sealed value waits for the page that shows it. */
export const SHOWN_ONCE_SECONDS = 60;

export interface CookieOptions {
  readonly secure: boolean;
  readonly maxAgeSeconds?: number;
  readonly path?: string;
}

/** A `Set-Cookie` value: always HttpOnly and SameSite=Strict, under /portal unless narrower. */
export function cookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${value}`, `Path=${options.path ?? '/portal'}`, 'HttpOnly', 'SameSite=Strict'];
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

/** A `Set-Cookie` value that removes the cookie. */
export function expiredCookie(name: string, options: CookieOptions): string {
  return cookie(name, '', { ...options, maxAgeSeconds: 0 });
}

/** Cookie values from a `Cookie` header; the first of a repeated name wins. */
export function readCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of (header ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const name = pair.slice(0, at).trim();
    if (!cookies.has(name)) cookies.set(name, pair.slice(at + 1).trim());
  }
  return cookies;
}

/**
 * A value shown once (a new key, a webhook secret) sealed for the redirect that follows the POST
 * that made or revealed it (POST, redirect, GET), so the server keeps no copy of it and any
 * instance can show it: AES-256-GCM under a key derived from the session id, which only the
 * admin's own cookie holds, and from what it carries, so one kind never opens as another. Read
 * once, then the cookie is removed.
 */
export function sealShownOnce(purpose: ShownOnce, sessionId: string, value: string, now: number): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', flashKey(purpose, sessionId), iv);
  // The deadline is sealed with the value: a copy of the cookie kept past it opens to nothing.
  const sealed = Buffer.concat([cipher.update(`${now + SHOWN_ONCE_SECONDS * 1000}\n${value}`, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), sealed].map((part) => part.toString('base64url')).join('.');
}

/** The value sealed for this session and purpose, or null if it was not sealed for them or its time has passed. */
export function openShownOnce(purpose: ShownOnce, sessionId: string, value: string, now: number): string | null {
  const [iv, tag, sealed] = value.split('.').map((part) => Buffer.from(part, 'base64url'));
  if (iv?.length !== 12 || tag?.length !== 16 || sealed === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', flashKey(purpose, sessionId), iv);
    decipher.setAuthTag(tag);
    const opened = Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8');
    const newline = opened.indexOf('\n');
    return newline > 0 && Number(opened.slice(0, newline)) > now ? opened.slice(newline + 1) : null;
  } catch {
    return null;
  }
}

function flashKey(purpose: ShownOnce, sessionId: string): Buffer {
  return hash('sha256', `portal ${purpose} cookie\0${sessionId}`, 'buffer');
}
