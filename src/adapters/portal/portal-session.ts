import type { Middleware } from 'koa';
import type { StartedSession } from '../../application/admin-sign-in/admin-session-start.js';
import type { ResumeSession } from '../../application/admin-sign-in/resume-session.js';
import { SESSION_MAX_AGE_MS } from '../../domain/admin.js';
import { seeOther } from './portal-answers.js';
import { cookie, expiredCookie, readCookies, SESSION_COOKIE, type CookieOptions } from './portal-cookies.js';
import { PortalRefusal } from './portal-errors.js';
import { PORTAL_PATHS } from './portal-paths.js';
import type { PortalContext, PortalState } from './portal-state.js';

/** Puts the session the cookie names in the request's state, if it is live; true if it is. */
async function resume(ctx: PortalContext, resumeSession: ResumeSession): Promise<boolean> {
  const sessionId = readCookies(ctx.get('cookie')).get(SESSION_COOKIE);
  if (sessionId === undefined || sessionId === '') return false;
  const session = await resumeSession.execute({ sessionId });
  if (session === null) return false;
  ctx.state.session = session;
  ctx.state.sessionId = sessionId;
  return true;
}

/** For a page that differs for a signed-in admin (the sign-in page sends one on). */
export function resolveSession(resumeSession: ResumeSession): Middleware<PortalState> {
  return async (ctx, next) => {
    await resume(ctx, resumeSession);
    await next();
  };
}

/** Pages for signed-in admins: a visitor without a session is sent to sign in; a POST without one is refused. */
export function requireSession(resumeSession: ResumeSession, cookies: CookieOptions): Middleware<PortalState> {
  return async (ctx, next) => {
    if (await resume(ctx, resumeSession)) {
      await next();
      return;
    }
    if (ctx.method === 'POST') throw new PortalRefusal('signed_out');
    ctx.append('Set-Cookie', expiredCookie(SESSION_COOKIE, cookies));
    ctx.redirect(PORTAL_PATHS.login);
  };
}

/** The session the browser had, which a new one ends: a session is never carried over a sign-in. */
export function replacedSession(ctx: PortalContext): { replacingSession?: string } {
  const replacingSession = readCookies(ctx.get('cookie')).get(SESSION_COOKIE);
  return replacingSession === undefined ? {} : { replacingSession };
}

/** Hands the browser the session a sign-in or an accepted invitation started, and sends it to its keys. */
export function beginSession(ctx: PortalContext, started: StartedSession, cookies: CookieOptions): void {
  ctx.append('Set-Cookie', cookie(SESSION_COOKIE, started.sessionId, { ...cookies, maxAgeSeconds: SESSION_MAX_AGE_MS / 1000 }));
  seeOther(ctx, PORTAL_PATHS.apiKeys);
}
