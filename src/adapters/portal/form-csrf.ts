import type { Middleware } from 'koa';
import { randomToken, sameSecret } from '../../domain/admin.js';
import { readForm } from './form-body.js';
import { cookie, FORM_COOKIE, readCookies, type CookieOptions } from './portal-cookies.js';
import { PortalRefusal } from './portal-errors.js';
import type { PortalContext, PortalState } from './portal-state.js';

/**
 * Reads a POST's form and lets it through only with its CSRF token: a signed-in form the session's,
 * the sign-in and invitation forms (there is no session yet) the form cookie's. Refused, nothing is done.
 */
export const checkForm: Middleware<PortalState> = async (ctx, next) => {
  const form = await readForm(ctx.req);
  const { session } = ctx.state;
  const expected = session === undefined ? readCookies(ctx.get('cookie')).get(FORM_COOKIE) ?? '' : session.csrfToken;
  if (expected === '' || !sameSecret(form.get('csrf') ?? '', expected)) throw new PortalRefusal('csrf_failed');
  ctx.state.form = form;
  await next();
};

/** The token for a form shown before sign-in: the browser's form cookie, set now if it has none. */
export function formToken(ctx: PortalContext, cookies: CookieOptions): string {
  const existing = readCookies(ctx.get('cookie')).get(FORM_COOKIE);
  if (existing !== undefined && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomToken();
  ctx.append('Set-Cookie', cookie(FORM_COOKIE, token, cookies));
  return token;
}
