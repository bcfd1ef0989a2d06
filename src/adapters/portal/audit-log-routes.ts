import { sendPage } from './portal-answers.js';
import { auditLogPage, viewerOf } from './portal-pages.js';
import type { PortalParts } from './portal-parts.js';
import { PORTAL_PATHS } from './portal-paths.js';
import type { PortalRouter } from './portal-state.js';
import { named } from './request-log.js';

/** What the partner's admins and the operators did, newest first. */
export function addAuditLogRoutes(router: PortalRouter, { useCases, signedIn }: PortalParts): void {
  router.get(PORTAL_PATHS.auditLog, named(PORTAL_PATHS.auditLog), signedIn, async (ctx) => {
    const session = ctx.state.session!;
    sendPage(ctx, 200, auditLogPage({ viewer: viewerOf(session), events: await useCases.readAuditLog.execute({ partnerId: session.partnerId }) }));
  });
}
