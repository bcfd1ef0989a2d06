import { checkForm, formToken } from './form-csrf.js';
import { sendPage } from './portal-answers.js';
import { invitePage } from './portal-pages.js';
import type { PortalParts } from './portal-parts.js';
import { PORTAL_PATHS } from './portal-paths.js';
import { beginSession, replacedSession } from './portal-session.js';
import type { PortalRouter } from './portal-state.js';
import { named } from './request-log.js';

const INVITE_PATH = `${PORTAL_PATHS.invitePrefix}:token`;

/** An invitation link's page: the invitee chooses a password and is signed in. */
export function addInvitationRoutes(router: PortalRouter, { useCases, cookies }: PortalParts): void {
  router.get(INVITE_PATH, named(INVITE_PATH), async (ctx) => {
    const invitation = await useCases.checkInvitation.execute({ token: ctx.params.token! });
    sendPage(ctx, 200, invitePage({ formToken: formToken(ctx, cookies), email: invitation.email, action: ctx.path, error: null }));
  });

  router.post(INVITE_PATH, named(INVITE_PATH), checkForm, async (ctx) => {
    const form = ctx.state.form!;
    const token = ctx.params.token!;
    ctx.state.formAgain = async (message) => {
      const { email } = await useCases.checkInvitation.execute({ token });
      return invitePage({ formToken: formToken(ctx, cookies), email, action: ctx.path, error: message });
    };
    const started = await useCases.acceptInvitation.execute({ token, password: form.get('password') ?? '', confirmation: form.get('confirm') ?? '', ...replacedSession(ctx) });
    beginSession(ctx, started, cookies);
  });
}
