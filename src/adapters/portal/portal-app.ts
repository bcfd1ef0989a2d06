import Router from '@koa/router';
import Koa from 'koa';
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
import { systemClock, type Clock } from '../../application/ports/clock.js';
import { AdminError } from '../../domain/admin-errors.js';
import { peerAddress, type ClientAddressOf } from '../listening/client-address.js';
import { checkForm, formToken } from './form-csrf.js';
import { seeOther, sendPage } from './portal-answers.js';
import { PORTAL_CSS, PORTAL_JS } from './portal-assets.js';
import { cookie, expiredCookie, NEW_KEY_COOKIE, NEW_KEY_COOKIE_SECONDS, openNewKey, readCookies, sealNewKey, SESSION_COOKIE } from './portal-cookies.js';
import { answerErrors } from './portal-errors.js';
import { apiKeysPage, ASSET_PATHS, auditLogPage, invitePage, loginPage, messagePage, newKeyPage, revokePage, viewerOf } from './portal-pages.js';
import { PORTAL_PATHS } from './portal-paths.js';
import { beginSession, replacedSession, requireSession, resolveSession } from './portal-session.js';
import type { PortalContext, PortalState } from './portal-state.js';
import { logRequests, named, type PortalRequestObserver } from './request-log.js';
import { securityHeaders } from './security-headers.js';

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

/** The partner portal: server-rendered pages, forms that work without JavaScript, POST-redirect-GET. */
export function createPortalApp(useCases: PortalUseCases, options: PortalOptions): Koa<PortalState> {
  const app = new Koa<PortalState>();
  // Into the log, not Koa's default of stderr.
  app.on('error', (error: unknown) => options.logger.error({ err: error }, 'portal response failed'));
  const router = new Router<PortalState>({ strict: true, sensitive: true });
  const cookieOptions = { secure: options.secureCookies };
  const clock = options.clock ?? systemClock;
  const clientAddress = options.clientAddress ?? peerAddress;

  const signedIn = requireSession(useCases.resumeSession, cookieOptions);

  app.use(logRequests(options.logger, options.metrics));
  app.use(securityHeaders(options.secureCookies));
  app.use(answerErrors(options.logger));
  app.use(async (ctx, next) => {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) sendPage(ctx, 404, messagePage('Page not found', 'There is no page at this address.', null, { href: PORTAL_PATHS.login, label: 'Go to the portal' }));
  });

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

  router.get(PORTAL_PATHS.login, named(PORTAL_PATHS.login), resolveSession(useCases.resumeSession), (ctx) => {
    if (ctx.state.session !== undefined) return ctx.redirect(PORTAL_PATHS.apiKeys);
    sendPage(ctx, 200, loginPage({ formToken: formToken(ctx, cookieOptions), email: '', error: null }));
  });

  router.post(PORTAL_PATHS.login, named(PORTAL_PATHS.login), checkForm, async (ctx) => {
    const form = ctx.state.form!;
    const email = form.get('email') ?? '';
    ctx.state.formAgain = (message) => loginPage({ formToken: formToken(ctx, cookieOptions), email, error: message });
    const started = await useCases.signIn.execute({ email, password: form.get('password') ?? '', address: clientAddress(ctx.req), ...replacedSession(ctx) });
    beginSession(ctx, started, cookieOptions);
  });

  const invitePath = `${PORTAL_PATHS.invitePrefix}:token`;
  router.get(invitePath, named(invitePath), async (ctx) => {
    const invitation = await useCases.checkInvitation.execute({ token: ctx.params.token! });
    sendPage(ctx, 200, invitePage({ formToken: formToken(ctx, cookieOptions), email: invitation.email, action: ctx.path, error: null }));
  });

  router.post(invitePath, named(invitePath), checkForm, async (ctx) => {
    const form = ctx.state.form!;
    const token = ctx.params.token!;
    ctx.state.formAgain = async (message) => {
      const { email } = await useCases.checkInvitation.execute({ token });
      return invitePage({ formToken: formToken(ctx, cookieOptions), email, action: ctx.path, error: message });
    };
    const started = await useCases.acceptInvitation.execute({ token, password: form.get('password') ?? '', confirmation: form.get('confirm') ?? '', ...replacedSession(ctx) });
    beginSession(ctx, started, cookieOptions);
  });

  router.post(PORTAL_PATHS.logout, named(PORTAL_PATHS.logout), signedIn, checkForm, async (ctx) => {
    await useCases.signOut.execute({ sessionId: ctx.state.sessionId! });
    ctx.append('Set-Cookie', expiredCookie(SESSION_COOKIE, cookieOptions));
    seeOther(ctx, PORTAL_PATHS.login);
  });

  router.get(PORTAL_PATHS.apiKeys, named(PORTAL_PATHS.apiKeys), signedIn, async (ctx) => {
    const session = ctx.state.session!;
    const sealed = readCookies(ctx.get('cookie')).get(NEW_KEY_COOKIE);
    let newKey: { key: string; id: string } | null = null;
    if (sealed !== undefined) {
      // Shown on this one page load: the cookie goes with this answer.
      ctx.append('Set-Cookie', expiredCookie(NEW_KEY_COOKIE, { ...cookieOptions, path: PORTAL_PATHS.apiKeys }));
      const opened = openNewKey(ctx.state.sessionId!, sealed, clock.now());
      const [id, key] = opened === null ? [] : opened.split('\n');
      if (id !== undefined && key !== undefined) newKey = { id, key };
    }
    const keys = await useCases.listKeys.execute({ partnerId: session.partnerId });
    const notice = typeof ctx.query.notice === 'string' ? NOTICES.get(ctx.query.notice) ?? null : null;
    sendPage(ctx, 200, apiKeysPage({ viewer: viewerOf(session), keys, newKey, notice }));
  });

  router.get(`${PORTAL_PATHS.apiKeys}/new`, named(`${PORTAL_PATHS.apiKeys}/new`), signedIn, (ctx) => {
    sendPage(ctx, 200, newKeyPage({ viewer: viewerOf(ctx.state.session!), error: null, label: '' }));
  });

  /** Hands the new key to the next page load only, sealed in a short-lived cookie, and redirects there. */
  const showOnce = (ctx: PortalContext, issued: { id: string; key: string }, announceFailure: string | null): void => {
    ctx.append('Set-Cookie', cookie(NEW_KEY_COOKIE, sealNewKey(ctx.state.sessionId!, `${issued.id}\n${issued.key}`, clock.now()), {
      ...cookieOptions, path: PORTAL_PATHS.apiKeys, maxAgeSeconds: NEW_KEY_COOKIE_SECONDS,
    }));
    if (announceFailure !== null) options.logger.warn({ keyId: issued.id, reason: announceFailure }, 'portal: key change not announced through Redis');
    seeOther(ctx, announceFailure === null ? PORTAL_PATHS.apiKeys : `${PORTAL_PATHS.apiKeys}?notice=not-announced`);
  };

  router.post(PORTAL_PATHS.apiKeys, named(PORTAL_PATHS.apiKeys), signedIn, checkForm, async (ctx) => {
    const session = ctx.state.session!;
    const label = (ctx.state.form!.get('label') ?? '').trim();
    ctx.state.formAgain = (message) => newKeyPage({ viewer: viewerOf(session), error: message, label });
    const { issued, announceFailure } = await useCases.issueKey.execute({ partnerId: session.partnerId, label: label === '' ? null : label, actor: { adminEmail: session.email } });
    showOnce(ctx, issued, announceFailure);
  });

  const keyPath = `${PORTAL_PATHS.apiKeys}/:keyId`;
  router.get(`${keyPath}/revoke`, named(`${keyPath}/revoke`), signedIn, async (ctx) => {
    const session = ctx.state.session!;
    const keyId = ctx.params.keyId!;
    const key = (await useCases.listKeys.execute({ partnerId: session.partnerId })).find((k) => k.id === keyId);
    // Refused as revoking it would be: another partner's key is not found, as a missing one is.
    if (key === undefined) throw new AdminError('key_not_found', `no API key with id ${JSON.stringify(keyId)}`);
    if (key.revokedAt !== null) return seeOther(ctx, PORTAL_PATHS.apiKeys);
    sendPage(ctx, 200, revokePage({ viewer: viewerOf(session), key }));
  });

  router.post(`${keyPath}/revoke`, named(`${keyPath}/revoke`), signedIn, checkForm, async (ctx) => {
    const session = ctx.state.session!;
    await useCases.revokeKey.execute({ partnerId: session.partnerId, keyId: ctx.params.keyId!, actor: { adminEmail: session.email } });
    seeOther(ctx, `${PORTAL_PATHS.apiKeys}?notice=revoked`);
  });

  router.post(`${keyPath}/replace`, named(`${keyPath}/replace`), signedIn, checkForm, async (ctx) => {
    const session = ctx.state.session!;
    const { issued, announceFailure } = await useCases.replaceKey.execute({ partnerId: session.partnerId, keyId: ctx.params.keyId!, actor: { adminEmail: session.email } });
    showOnce(ctx, issued, announceFailure);
  });

  router.get(PORTAL_PATHS.auditLog, named(PORTAL_PATHS.auditLog), signedIn, async (ctx) => {
    const session = ctx.state.session!;
    sendPage(ctx, 200, auditLogPage({ viewer: viewerOf(session), events: await useCases.readAuditLog.execute({ partnerId: session.partnerId }) }));
  });

  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/** A map, not an object: `?notice=__proto__` must find nothing. */
const NOTICES: ReadonlyMap<string, string> = new Map([
  ['revoked', 'The key is revoked: requests with it are refused from now on.'],
  ['not-announced', 'The change is saved, but the other servers could not be told at once: it may take up to a minute to apply everywhere.'],
]);
