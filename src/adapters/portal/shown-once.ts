import type { Clock } from '../../application/common/clock.js';
import { cookie, expiredCookie, openShownOnce, readCookies, sealShownOnce, SHOWN_ONCE_COOKIES, SHOWN_ONCE_SECONDS, type CookieOptions, type ShownOnce } from './portal-cookies.js';
import type { PortalContext } from './portal-state.js';

/** Hands `value` to the next load of the page at `path` only, sealed in a short-lived cookie of the admin's session. */
export function handOver(ctx: PortalContext, purpose: ShownOnce, path: string, value: string, cookies: CookieOptions, clock: Clock): void {
  ctx.append('Set-Cookie', cookie(SHOWN_ONCE_COOKIES[purpose], sealShownOnce(purpose, ctx.state.sessionId!, value, clock.now()), {
    ...cookies, path, maxAgeSeconds: SHOWN_ONCE_SECONDS,
  }));
}

/** What was handed over to this page load, if anything; the cookie goes with this answer, so a reload shows nothing. */
export function takeOver(ctx: PortalContext, purpose: ShownOnce, path: string, cookies: CookieOptions, clock: Clock): string | null {
  const name = SHOWN_ONCE_COOKIES[purpose];
  const sealed = readCookies(ctx.get('cookie')).get(name);
  if (sealed === undefined) return null;
  ctx.append('Set-Cookie', expiredCookie(name, { ...cookies, path }));
  return openShownOnce(purpose, ctx.state.sessionId!, sealed, clock.now());
}
