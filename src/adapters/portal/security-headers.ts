import type { Middleware } from 'koa';
import helmet from 'koa-helmet';

/**
 * Only the portal's own style sheet and script; no inline script or style, no frames, forms
 * posting only here, no referrer (an invitation's token is in its URL).
 */
export const PORTAL_CSP_DIRECTIVES = {
  defaultSrc: ["'none'"],
  styleSrc: ["'self'"],
  scriptSrc: ["'self'"],
  imgSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
};

/** A year: what HSTS preload lists ask of a site, and long enough that a visit every few months keeps it. */
const HSTS_MAX_AGE_SECONDS = 31_536_000;

/**
 * Set before anything else runs, so every answer carries them, an error page's and a redirect's alike.
 * helmet's page set with our policy, frames refused outright, and HSTS only where admins come over
 * TLS. Left out: helmet's headers for browsers that are gone (X-Download-Options for IE 8,
 * X-Permitted-Cross-Domain-Policies for Flash, X-XSS-Protection: 0 against an auditor no browser
 * runs now) and X-DNS-Prefetch-Control, as a page links to no other host.
 */
export function securityHeaders(secureCookies: boolean): Middleware {
  const helmetHeaders = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: PORTAL_CSP_DIRECTIVES },
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    // Secure cookies mean admins come over TLS: browsers are told to come no other way. Only this
    // host: its subdomains are not the portal's to bind.
    strictTransportSecurity: secureCookies ? { maxAge: HSTS_MAX_AGE_SECONDS, includeSubDomains: false } : false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
    xDnsPrefetchControl: false,
  });
  return async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    await helmetHeaders(ctx, next);
  };
}
