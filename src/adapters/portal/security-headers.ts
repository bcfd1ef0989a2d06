import type { Middleware } from 'koa';

/**
 * Only the portal's own style sheet and script; no inline script or style, no frames, forms
 * posting only here, no referrer (an invitation's token is in its URL).
 */
export const PORTAL_CSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** A year: what HSTS preload lists ask of a site, and long enough that a visit every few months keeps it. */
const HSTS_MAX_AGE_SECONDS = 31_536_000;

/** Set before anything else runs, so every answer carries them, an error page's and a redirect's alike. */
export function securityHeaders(secureCookies: boolean): Middleware {
  return async (ctx, next) => {
    ctx.set('Content-Security-Policy', PORTAL_CSP);
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    // Secure cookies mean admins come over TLS: browsers are told to come no other way.
    if (secureCookies) ctx.set('Strict-Transport-Security', `max-age=${HSTS_MAX_AGE_SECONDS}`);
    await next();
  };
}
