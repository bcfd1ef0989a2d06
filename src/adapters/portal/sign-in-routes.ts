import { checkForm, formToken } from './form-csrf.js';
import { seeOther, sendPage } from './portal-answers.js';
import { expiredCookie, SESSION_COOKIE } from './portal-cookies.js';
import { loginPage } from './portal-pages.js';
import type { PortalParts } from './portal-parts.js';
import { PORTAL_PATHS } from './portal-paths.js';
import { beginSession, replacedSession, resolveSession } from './portal-session.js';
import type { PortalRouter } from './portal-state.js';
import { named } from './request-log.js';

/** Signing in with email and password, and out. */
export function addSignInRoutes(router: PortalRouter, { useCases, cookies, signedIn, clientAddress }: PortalParts): void {
  router.get(PORTAL_PATHS.login, named(PORTAL_PATHS.login), resolveSession(useCases.resumeSession), (ctx) => {
    if (ctx.state.session !== undefined) return ctx.redirect(PORTAL_PATHS.apiKeys);
    sendPage(ctx, 200, loginPage({ formToken: formToken(ctx, cookies), email: '', error: null }));
  });

  router.post(PORTAL_PATHS.login, named(PORTAL_PATHS.login), checkForm, async (ctx) => {
    const form = ctx.state.form!;
    const email = form.get('email') ?? '';
    ctx.state.formAgain = (message) => loginPage({ formToken: formToken(ctx, cookies), email, error: message });
    const started = await useCases.signIn.execute({ email, password: form.get('password') ?? '', address: clientAddress(ctx.req), ...replacedSession(ctx) });
    beginSession(ctx, started, cookies);
  });

  router.post(PORTAL_PATHS.logout, named(PORTAL_PATHS.logout), signedIn, checkForm, async (ctx) => {
    await useCases.signOut.execute({ sessionId: ctx.state.sessionId! });
    ctx.append('Set-Cookie', expiredCookie(SESSION_COOKIE, cookies));
    seeOther(ctx, PORTAL_PATHS.login);
  });
}
