import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../../application/common/clock.js';
import { peerAddress, type ClientAddressOf } from '../listening/client-address.js';
import { addApiKeyRoutes } from './api-keys-routes.js';
import { addAssetRoutes } from './asset-routes.js';
import { addAuditLogRoutes } from './audit-log-routes.js';
import { addInvitationRoutes } from './invitation-routes.js';
import { sendPage } from './portal-answers.js';
import { answerErrors } from './portal-errors.js';
import { messagePage } from './portal-pages.js';
import type { PortalParts, PortalUseCases } from './portal-parts.js';
import { PORTAL_PATHS } from './portal-paths.js';
import { requireSession } from './portal-session.js';
import type { PortalState } from './portal-state.js';
import { tracing } from '../tracing/tracing.js';
import { logRequests, traceRequests, type PortalRequestObserver } from './request-log.js';
import { securityHeaders } from './security-headers.js';
import { addSignInRoutes } from './sign-in-routes.js';
import { addWebhookRoutes } from './webhooks-routes.js';

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
  const cookies = { secure: options.secureCookies };
  const parts: PortalParts = {
    useCases,
    cookies,
    signedIn: requireSession(useCases.resumeSession, cookies),
    clock: options.clock ?? systemClock,
    logger: options.logger,
    clientAddress: options.clientAddress ?? peerAddress,
  };
  const router = new Router<PortalState>({ strict: true, sensitive: true });
  addAssetRoutes(router);
  addSignInRoutes(router, parts);
  addInvitationRoutes(router, parts);
  addApiKeyRoutes(router, parts);
  addWebhookRoutes(router, parts);
  addAuditLogRoutes(router, parts);

  // Tracing is started before the listeners: with it off, the portal's requests pass no middleware of its.
  if (tracing() !== undefined) app.use(traceRequests());
  app.use(logRequests(options.logger, options.metrics));
  app.use(securityHeaders(options.secureCookies));
  app.use(answerErrors(options.logger));
  app.use(pageNotFound);
  app.use(router.routes());
  // 405 with Allow for a page asked with a method it does not take, 501 for a method no page takes.
  app.use(router.allowedMethods());
  return app;
}

/** An address no route has gets the portal's page, not Koa's plain text; a route's own 404 has its page already. */
const pageNotFound: Middleware<PortalState> = async (ctx, next) => {
  await next();
  if (ctx.status === 404 && ctx.body === undefined) sendPage(ctx, 404, messagePage('Page not found', 'There is no page at this address.', null, { href: PORTAL_PATHS.login, label: 'Go to the portal' }));
};
