import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import type { Logger } from 'pino';
import type { AcceptInvitation } from '../../application/accept-invitation.js';
import type { CheckInvitation } from '../../application/check-invitation.js';
import type { IssueApiKey } from '../../application/issue-api-key.js';
import type { ListApiKeys } from '../../application/list-api-keys.js';
import type { ReadAuditLog } from '../../application/read-audit-log.js';
import type { ReplaceApiKey } from '../../application/replace-api-key.js';
import type { ResumeSession } from '../../application/resume-session.js';
import type { RevokeApiKey } from '../../application/revoke-api-key.js';
import type { SignIn } from '../../application/sign-in.js';
import type { SignOut } from '../../application/sign-out.js';
import type { StartedSession } from '../../application/admin-session-start.js';
import { systemClock, type Clock } from '../../application/ports/clock.js';
import { TIMEOUTS } from '../../application/timeouts.js';
import { AdminError, type AdminErrorCode } from '../../domain/admin-errors.js';
import { peerAddress, type ClientAddressOf } from '../listening/client-address.js';
import { randomToken, sameSecret, SESSION_MAX_AGE_MS, type AdminSession } from '../../domain/admin.js';
import { FormError, readForm } from './form-body.js';
import { PORTAL_CSS, PORTAL_JS } from './portal-assets.js';
import {
  cookie, expiredCookie, FORM_COOKIE, NEW_KEY_COOKIE, NEW_KEY_COOKIE_SECONDS, openNewKey, readCookies, sealNewKey, SESSION_COOKIE,
} from './portal-cookies.js';
import { apiKeysPage, ASSET_PATHS, auditLogPage, invitePage, loginPage, messagePage, newKeyPage, revokePage, type Viewer } from './portal-pages.js';
import { PORTAL_PATHS } from './portal-paths.js';

/** The use cases the portal drives: the same ones the CLI does for keys. */
export interface PortalUseCases {
  readonly signIn: SignIn;
  readonly signOut: SignOut;
  readonly resumeSession: ResumeSession;
  readonly checkInvitation: CheckInvitation;
  readonly acceptInvitation: AcceptInvitation;
  readonly issueKey: IssueApiKey;
  readonly replaceKey: ReplaceApiKey;
  readonly revokeKey: RevokeApiKey;
  readonly listKeys: ListApiKeys;
  readonly readAuditLog: ReadAuditLog;
}

/** Where portal requests are counted, by route template (never the path: an invitation's token is in it). */
export interface PortalRequestObserver {
  observeRequest(route: string, status: number, seconds: number): void;
}

export interface PortalOptions {
  readonly logger: Logger;
  /** Marks cookies `Secure`: the portal is reached over TLS. */
  readonly secureCookies: boolean;
  readonly metrics?: PortalRequestObserver;
  /** Where a request comes from, for the sign-in budget per address (default: the peer's address). */
  readonly clientAddress?: ClientAddressOf;
  /** The time a new key's cookie is sealed and opened by (default the system's). */
  readonly clock?: Clock;
}

/**
 * Only the portal's own style sheet and script; no inline script or style, no frames, forms
 * posting only here, no referrer (an invitation's token is in its URL).
 */
export const PORTAL_CSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const FORBIDDEN_TEXT = 'This form has expired or did not come from this site. Go back, reload the page, and try again.';
const NOT_FOUND_KEY_TEXT = 'There is no such key among your partner\'s keys.';

interface State {
  route: string;
  session?: AdminSession;
  sessionId?: string;
}

type PortalContext = Context & { state: State };

const HTML_TYPE = 'text/html; charset=utf-8';
/** A year: what HSTS preload lists ask of a site, and long enough that a visit every few months keeps it. */
const HSTS_MAX_AGE_SECONDS = 31_536_000;

/** The partner portal: server-rendered pages, forms that work without JavaScript, POST-redirect-GET. */
export function createPortalApp(useCases: PortalUseCases, options: PortalOptions): Koa {
  const app = new Koa();
  // Into the log, not Koa's default of stderr.
  app.on('error', (error: unknown) => options.logger.error({ err: error }, 'portal response failed'));
  const router = new Router({ strict: true, sensitive: true });
  const cookieOptions = { secure: options.secureCookies };
  const clock = options.clock ?? systemClock;
  const clientAddress = options.clientAddress ?? peerAddress;

  app.use(async (ctx, next) => {
    const started = performance.now();
    (ctx.state as State).route = 'unmatched';
    ctx.set('Content-Security-Policy', PORTAL_CSP);
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    // Secure cookies mean admins come over TLS: browsers are told to come no other way.
    if (options.secureCookies) ctx.set('Strict-Transport-Security', `max-age=${HSTS_MAX_AGE_SECONDS}`);
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) page(ctx, 404, messagePage('Page not found', 'There is no page at this address.', null, { href: PORTAL_PATHS.login, label: 'Go to the portal' }));
    } catch (error) {
      if (error instanceof FormError) {
        page(ctx, error.status, messagePage('Form refused', error.message, null));
      } else {
        options.logger.error({ err: error, route: (ctx.state as State).route }, 'portal request failed');
        page(ctx, 500, messagePage('Something went wrong', 'The request could not be completed. Try again in a moment.', null));
      }
    } finally {
      const { route } = ctx.state as State;
      const ms = performance.now() - started;
      // The route template, never the path: an invitation's token is part of its path.
      options.logger.info({ portal: true, method: ctx.method, route, status: ctx.status, ms: Math.round(ms * 100) / 100 }, 'request');
      options.metrics?.observeRequest(route, ctx.status, ms / 1000);
    }
  });

  const named = (route: string) => async (ctx: Context, next: () => Promise<unknown>) => {
    (ctx.state as State).route = route;
    await next();
  };

  /** The signed-in session, if the cookie names a live one. */
  const resume = async (ctx: PortalContext): Promise<AdminSession | null> => {
    const sessionId = readCookies(ctx.get('cookie')).get(SESSION_COOKIE);
    if (sessionId === undefined || sessionId === '') return null;
    const session = await useCases.resumeSession.execute({ sessionId });
    if (session === null) return null;
    ctx.state.session = session;
    ctx.state.sessionId = sessionId;
    return session;
  };

  /** Pages for signed-in admins: a visitor without a session is sent to sign in; a POST without one is refused. */
  const signedIn = async (ctx: Context, next: () => Promise<unknown>) => {
    const c = ctx as PortalContext;
    if ((await resume(c)) === null) {
      if (ctx.method === 'POST') return page(ctx, 403, messagePage('Signed out', 'Your session has ended. Sign in again.', null, { href: PORTAL_PATHS.login, label: 'Sign in' }));
      ctx.append('Set-Cookie', expiredCookie(SESSION_COOKIE, cookieOptions));
      return ctx.redirect(PORTAL_PATHS.login);
    }
    await next();
  };

  /** Every signed-in form carries the session's CSRF token; without it, 403 and nothing done. */
  const signedInForm = async (ctx: PortalContext): Promise<URLSearchParams | null> => {
    const form = await readForm(ctx.req);
    if (!sameSecret(form.get('csrf') ?? '', ctx.state.session!.csrfToken)) {
      page(ctx, 403, messagePage('Form refused', FORBIDDEN_TEXT, viewerOf(ctx.state.session!)));
      return null;
    }
    return form;
  };

  /** The sign-in and invitation forms: their token must equal the form cookie's (there is no session yet). */
  const anonymousForm = async (ctx: Context): Promise<URLSearchParams | null> => {
    const form = await readForm(ctx.req);
    const expected = readCookies(ctx.get('cookie')).get(FORM_COOKIE) ?? '';
    if (expected === '' || !sameSecret(form.get('csrf') ?? '', expected)) {
      page(ctx, 403, messagePage('Form refused', FORBIDDEN_TEXT, null, { href: PORTAL_PATHS.login, label: 'Sign in' }));
      return null;
    }
    return form;
  };

  const formToken = (ctx: Context): string => {
    const existing = readCookies(ctx.get('cookie')).get(FORM_COOKIE);
    if (existing !== undefined && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
    const token = randomToken();
    ctx.append('Set-Cookie', cookie(FORM_COOKIE, token, cookieOptions));
    return token;
  };

  const beginSession = (ctx: Context, started: StartedSession): void => {
    ctx.append('Set-Cookie', cookie(SESSION_COOKIE, started.sessionId, { ...cookieOptions, maxAgeSeconds: SESSION_MAX_AGE_MS / 1000 }));
    ctx.status = 303;
    ctx.redirect(PORTAL_PATHS.apiKeys);
  };

  const seeOther = (ctx: Context, location: string): void => {
    ctx.status = 303;
    ctx.redirect(location);
  };

  router.get(ASSET_PATHS.css, named('asset'), (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = PORTAL_CSS;
  });
  router.get(ASSET_PATHS.js, named('asset'), (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = PORTAL_JS;
  });

  router.get('/portal', named('/portal'), (ctx) => ctx.redirect(PORTAL_PATHS.apiKeys));
  router.get('/portal/', named('/portal'), (ctx) => ctx.redirect(PORTAL_PATHS.apiKeys));

  router.get(PORTAL_PATHS.login, named(PORTAL_PATHS.login), async (ctx) => {
    if ((await resume(ctx)) !== null) return ctx.redirect(PORTAL_PATHS.apiKeys);
    page(ctx, 200, loginPage({ formToken: formToken(ctx), email: '', error: null }));
  });

  router.post(PORTAL_PATHS.login, named(PORTAL_PATHS.login), async (ctx) => {
    const form = await anonymousForm(ctx);
    if (form === null) return;
    const email = form.get('email') ?? '';
    const replacingSession = readCookies(ctx.get('cookie')).get(SESSION_COOKIE);
    try {
      beginSession(ctx, await useCases.signIn.execute({
        email, password: form.get('password') ?? '', address: clientAddress(ctx.req), ...(replacingSession === undefined ? {} : { replacingSession }),
      }));
    } catch (error) {
      if (!(error instanceof AdminError)) throw error;
      // A flood that waits for each answer is slowed to one attempt per connection per second.
      if (error.code === 'sign_in_throttled') await new Promise((resolve) => setTimeout(resolve, TIMEOUTS.heldBackAnswerDelayMs));
      if (error.retryAfterSeconds !== null) ctx.set('Retry-After', String(error.retryAfterSeconds));
      page(ctx, SIGN_IN_REFUSALS.get(error.code) ?? 401, loginPage({ formToken: formToken(ctx), email, error: error.message }));
    }
  });

  const invitePath = `${PORTAL_PATHS.invitePrefix}:token`;
  router.get(invitePath, named(invitePath), async (ctx) => {
    try {
      const invitation = await useCases.checkInvitation.execute({ token: ctx.params.token! });
      page(ctx, 200, invitePage({ formToken: formToken(ctx), email: invitation.email, action: ctx.path, error: null }));
    } catch (error) {
      if (!(error instanceof AdminError)) throw error;
      page(ctx, 410, messagePage('Invitation not valid', error.message, null, { href: PORTAL_PATHS.login, label: 'Sign in' }));
    }
  });

  router.post(invitePath, named(invitePath), async (ctx) => {
    const form = await anonymousForm(ctx);
    if (form === null) return;
    const token = ctx.params.token!;
    const replacingSession = readCookies(ctx.get('cookie')).get(SESSION_COOKIE);
    try {
      beginSession(ctx, await useCases.acceptInvitation.execute({
        token, password: form.get('password') ?? '', confirmation: form.get('confirm') ?? '', ...(replacingSession === undefined ? {} : { replacingSession }),
      }));
    } catch (error) {
      if (!(error instanceof AdminError)) throw error;
      if (error.code === 'invalid_invitation' || error.code === 'admin_exists') {
        page(ctx, 410, messagePage('Invitation not valid', error.message, null, { href: PORTAL_PATHS.login, label: 'Sign in' }));
        return;
      }
      // The hash gate is the one sign-in waits at: full, it is the server's refusal, answered as there.
      if (error.retryAfterSeconds !== null) ctx.set('Retry-After', String(error.retryAfterSeconds));
      const invitation = await useCases.checkInvitation.execute({ token });
      page(ctx, SIGN_IN_REFUSALS.get(error.code) ?? 400, invitePage({ formToken: formToken(ctx), email: invitation.email, action: ctx.path, error: error.message }));
    }
  });

  router.post(PORTAL_PATHS.logout, named(PORTAL_PATHS.logout), signedIn, async (ctx) => {
    const c = ctx as PortalContext;
    if ((await signedInForm(c)) === null) return;
    await useCases.signOut.execute({ sessionId: c.state.sessionId! });
    ctx.append('Set-Cookie', expiredCookie(SESSION_COOKIE, cookieOptions));
    seeOther(ctx, PORTAL_PATHS.login);
  });

  router.get(PORTAL_PATHS.apiKeys, named(PORTAL_PATHS.apiKeys), signedIn, async (ctx) => {
    const c = ctx as PortalContext;
    const session = c.state.session!;
    const sealed = readCookies(ctx.get('cookie')).get(NEW_KEY_COOKIE);
    let newKey: { key: string; id: string } | null = null;
    if (sealed !== undefined) {
      // Shown on this one page load: the cookie goes with this answer.
      ctx.append('Set-Cookie', expiredCookie(NEW_KEY_COOKIE, { ...cookieOptions, path: PORTAL_PATHS.apiKeys }));
      const opened = openNewKey(c.state.sessionId!, sealed, clock.now());
      const [id, key] = opened === null ? [] : opened.split('\n');
      if (id !== undefined && key !== undefined) newKey = { id, key };
    }
    const keys = await useCases.listKeys.execute({ partnerId: session.partnerId });
    const notice = typeof ctx.query.notice === 'string' ? NOTICES.get(ctx.query.notice) ?? null : null;
    page(ctx, 200, apiKeysPage({ viewer: viewerOf(session), keys, newKey, notice }));
  });

  router.get(`${PORTAL_PATHS.apiKeys}/new`, named(`${PORTAL_PATHS.apiKeys}/new`), signedIn, (ctx) => {
    page(ctx, 200, newKeyPage({ viewer: viewerOf((ctx as PortalContext).state.session!), error: null, label: '' }));
  });

  /** Hands the new key to the next page load only, sealed in a short-lived cookie, and redirects there. */
  const showOnce = (ctx: PortalContext, issued: { id: string; key: string }, announceFailure: string | null): void => {
    ctx.append('Set-Cookie', cookie(NEW_KEY_COOKIE, sealNewKey(ctx.state.sessionId!, `${issued.id}\n${issued.key}`, clock.now()), {
      ...cookieOptions, path: PORTAL_PATHS.apiKeys, maxAgeSeconds: NEW_KEY_COOKIE_SECONDS,
    }));
    if (announceFailure !== null) options.logger.warn({ keyId: issued.id, reason: announceFailure }, 'portal: key change not announced through Redis');
    seeOther(ctx, announceFailure === null ? PORTAL_PATHS.apiKeys : `${PORTAL_PATHS.apiKeys}?notice=not-announced`);
  };

  router.post(PORTAL_PATHS.apiKeys, named(PORTAL_PATHS.apiKeys), signedIn, async (ctx) => {
    const c = ctx as PortalContext;
    const form = await signedInForm(c);
    if (form === null) return;
    const session = c.state.session!;
    const label = (form.get('label') ?? '').trim();
    try {
      const { issued, announceFailure } = await useCases.issueKey.execute({ partnerId: session.partnerId, label: label === '' ? null : label, actor: { adminEmail: session.email } });
      showOnce(c, issued, announceFailure);
    } catch (error) {
      if (!(error instanceof AdminError)) throw error;
      page(ctx, 400, newKeyPage({ viewer: viewerOf(session), error: error.message, label }));
    }
  });

  const keyPath = `${PORTAL_PATHS.apiKeys}/:keyId`;
  router.get(`${keyPath}/revoke`, named(`${keyPath}/revoke`), signedIn, async (ctx) => {
    const session = (ctx as PortalContext).state.session!;
    const keys = await useCases.listKeys.execute({ partnerId: session.partnerId });
    const key = keys.find((k) => k.id === ctx.params.keyId);
    if (key === undefined) return keyNotFound(ctx, session);
    if (key.revokedAt !== null) return seeOther(ctx, PORTAL_PATHS.apiKeys);
    page(ctx, 200, revokePage({ viewer: viewerOf(session), key }));
  });

  router.post(`${keyPath}/revoke`, named(`${keyPath}/revoke`), signedIn, async (ctx) => {
    const c = ctx as PortalContext;
    if ((await signedInForm(c)) === null) return;
    const session = c.state.session!;
    try {
      await useCases.revokeKey.execute({ partnerId: session.partnerId, keyId: ctx.params.keyId!, actor: { adminEmail: session.email } });
    } catch (error) {
      if (error instanceof AdminError) return keyNotFound(ctx, session);
      throw error;
    }
    seeOther(ctx, `${PORTAL_PATHS.apiKeys}?notice=revoked`);
  });

  router.post(`${keyPath}/replace`, named(`${keyPath}/replace`), signedIn, async (ctx) => {
    const c = ctx as PortalContext;
    if ((await signedInForm(c)) === null) return;
    const session = c.state.session!;
    try {
      const { issued, announceFailure } = await useCases.replaceKey.execute({ partnerId: session.partnerId, keyId: ctx.params.keyId!, actor: { adminEmail: session.email } });
      showOnce(c, issued, announceFailure);
    } catch (error) {
      if (!(error instanceof AdminError)) throw error;
      if (error.code === 'key_not_active') return page(ctx, 409, messagePage('Key already revoked', error.message, viewerOf(session), { href: PORTAL_PATHS.apiKeys, label: 'Back to API keys' }));
      keyNotFound(ctx, session);
    }
  });

  router.get(PORTAL_PATHS.auditLog, named(PORTAL_PATHS.auditLog), signedIn, async (ctx) => {
    const session = (ctx as PortalContext).state.session!;
    page(ctx, 200, auditLogPage({ viewer: viewerOf(session), events: await useCases.readAuditLog.execute({ partnerId: session.partnerId }) }));
  });

  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/** How a refused sign-in is answered; any other refusal is a wrong email or password, 401. */
const SIGN_IN_REFUSALS: ReadonlyMap<AdminErrorCode, number> = new Map([
  ['sign_in_locked', 429],
  ['sign_in_throttled', 429],
  ['sign_in_busy', 503],
]);

/** A map, not an object: `?notice=__proto__` must find nothing. */
const NOTICES: ReadonlyMap<string, string> = new Map([
  ['revoked', 'The key is revoked: requests with it are refused from now on.'],
  ['not-announced', 'The change is saved, but the other servers could not be told at once: it may take up to a minute to apply everywhere.'],
]);

function viewerOf(session: AdminSession): Viewer {
  return { email: session.email, partnerId: session.partnerId, csrfToken: session.csrfToken };
}

function keyNotFound(ctx: Context, session: AdminSession): void {
  page(ctx, 404, messagePage('Key not found', NOT_FOUND_KEY_TEXT, viewerOf(session), { href: PORTAL_PATHS.apiKeys, label: 'Back to API keys' }));
}

function page(ctx: Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = HTML_TYPE;
  ctx.body = body;
}
