import { endpointNotFound } from '../../domain/webhook-errors.js';
import type { WebhookEndpointListing } from '../../application/webhooks/list-webhook-endpoints.js';
import type { AdminSession } from '../../domain/admin.js';
import { checkForm } from './form-csrf.js';
import { seeOther, sendPage } from './portal-answers.js';
import { viewerOf } from './portal-pages.js';
import type { PortalParts } from './portal-parts.js';
import { PORTAL_PATHS } from './portal-paths.js';
import type { PortalContext, PortalRouter } from './portal-state.js';
import { named } from './request-log.js';
import { handOver, takeOver } from './shown-once.js';
import { deleteEndpointPage, EMPTY_ADD_FORM, webhooksPage, type AddEndpointForm, type EndpointView } from './webhooks-page.js';

const ENDPOINT_PATH = `${PORTAL_PATHS.webhooks}/:endpointId`;

/** A map, not an object: `?notice=__proto__` must find nothing. */
const NOTICES: ReadonlyMap<string, string> = new Map([
  ['added', 'The endpoint is added and enabled. "Reveal secret" shows the secret its messages are signed with.'],
  ['test-sent', 'A test event is on its way; its attempts appear in the endpoint\'s delivery log.'],
  ['resent', 'The message is on its way again, with the same webhook-id; its attempts appear in the delivery log.'],
  ['rotated', 'A new signing secret is in use. For the next 24 hours each message also carries a signature made with the previous one, while your receiver switches.'],
  ['disabled', 'The endpoint is disabled: it gets no messages until it is enabled again.'],
  ['enabled', 'The endpoint is enabled.'],
  ['deleted', 'The endpoint is deleted.'],
]);

/**
 * The partner's webhook endpoints: the list with each one's last delivery and its delivery log, add,
 * test, resend, rotate, disable, enable and delete, and the signing secret shown on one page load.
 * Each action runs the use case the CLI runs, scoped to the admin's partner: another partner's
 * endpoint is not found, as a missing one is.
 */
export function addWebhookRoutes(router: PortalRouter, { useCases, cookies, signedIn, clock }: PortalParts): void {
  const { webhooks } = useCases;
  const actor = (session: AdminSession) => ({ adminEmail: session.email });

  const endpointViews = async (partnerId: string): Promise<EndpointView[]> => {
    const endpoints = await webhooks.list.execute({ partnerId });
    return Promise.all(endpoints.map(async (endpoint) => ({ endpoint, log: await webhooks.deliveries.execute({ partnerId, endpointId: endpoint.id }) })));
  };
  const page = async (ctx: PortalContext, add: AddEndpointForm, revealed: { endpointId: string; secret: string } | null = null): Promise<string> => {
    const session = ctx.state.session!;
    const endpoints = await endpointViews(session.partnerId);
    const shown = revealed === null ? undefined : endpoints.find((view) => view.endpoint.id === revealed.endpointId);
    const notice = typeof ctx.query.notice === 'string' ? NOTICES.get(ctx.query.notice) ?? null : null;
    return webhooksPage({
      viewer: viewerOf(session), endpoints, notice, add, allowPrivateTargets: webhooks.add.urls.allowPrivateTargets,
      revealed: shown === undefined || revealed === null ? null : { endpoint: shown.endpoint, secret: revealed.secret },
    });
  };
  const done = (ctx: PortalContext, notice: string): void => seeOther(ctx, `${PORTAL_PATHS.webhooks}?notice=${notice}`);

  router.get(PORTAL_PATHS.webhooks, named(PORTAL_PATHS.webhooks), signedIn, async (ctx) => {
    const [id, secret] = takeOver(ctx, 'webhook-secret', PORTAL_PATHS.webhooks, cookies, clock)?.split('\n') ?? [];
    sendPage(ctx, 200, await page(ctx, EMPTY_ADD_FORM, id !== undefined && secret !== undefined ? { endpointId: id, secret } : null));
  });

  router.post(PORTAL_PATHS.webhooks, named(PORTAL_PATHS.webhooks), signedIn, checkForm, async (ctx) => {
    const session = ctx.state.session!;
    const form = ctx.state.form!;
    const add = { url: form.get('url') ?? '', description: form.get('description') ?? '' };
    ctx.state.formAgain = (error) => page(ctx, { ...add, error });
    await webhooks.add.execute({ partnerId: session.partnerId, url: add.url, description: add.description, actor: actor(session) });
    done(ctx, 'added');
  });

  router.post(`${ENDPOINT_PATH}/secret`, named(`${ENDPOINT_PATH}/secret`), signedIn, checkForm, async (ctx) => {
    const revealed = await webhooks.revealSecret.execute({ partnerId: ctx.state.session!.partnerId, endpointId: ctx.params.endpointId! });
    // Never in the address: the secret rides to the next page load sealed, as a new key does.
    handOver(ctx, 'webhook-secret', PORTAL_PATHS.webhooks, `${revealed.id}\n${revealed.secret}`, cookies, clock);
    seeOther(ctx, PORTAL_PATHS.webhooks);
  });

  router.post(`${ENDPOINT_PATH}/test`, named(`${ENDPOINT_PATH}/test`), signedIn, checkForm, async (ctx) => {
    await webhooks.sendTest.execute({ partnerId: ctx.state.session!.partnerId, endpointId: ctx.params.endpointId! });
    done(ctx, 'test-sent');
  });

  router.post(`${ENDPOINT_PATH}/messages/:messageId/resend`, named(`${ENDPOINT_PATH}/messages/:messageId/resend`), signedIn, checkForm, async (ctx) => {
    await webhooks.resend.execute({ partnerId: ctx.state.session!.partnerId, endpointId: ctx.params.endpointId!, messageId: ctx.params.messageId! });
    done(ctx, 'resent');
  });

  router.post(`${ENDPOINT_PATH}/rotate`, named(`${ENDPOINT_PATH}/rotate`), signedIn, checkForm, async (ctx) => {
    const session = ctx.state.session!;
    await webhooks.rotateSecret.execute({ partnerId: session.partnerId, endpointId: ctx.params.endpointId!, actor: actor(session) });
    done(ctx, 'rotated');
  });

  for (const status of ['enabled', 'disabled'] as const) {
    const path = `${ENDPOINT_PATH}/${status === 'enabled' ? 'enable' : 'disable'}`;
    router.post(path, named(path), signedIn, checkForm, async (ctx) => {
      const session = ctx.state.session!;
      await webhooks.setStatus.execute({ partnerId: session.partnerId, endpointId: ctx.params.endpointId!, status, actor: actor(session) });
      done(ctx, status);
    });
  }

  router.get(`${ENDPOINT_PATH}/delete`, named(`${ENDPOINT_PATH}/delete`), signedIn, async (ctx) => {
    const session = ctx.state.session!;
    const id = ctx.params.endpointId!;
    const endpoint: WebhookEndpointListing | undefined = (await webhooks.list.execute({ partnerId: session.partnerId })).find((e) => e.id === id);
    // Refused as deleting it would be: another partner's endpoint is not found, as a missing one is.
    if (endpoint === undefined) throw endpointNotFound(id);
    sendPage(ctx, 200, deleteEndpointPage({ viewer: viewerOf(session), endpoint }));
  });

  router.post(`${ENDPOINT_PATH}/delete`, named(`${ENDPOINT_PATH}/delete`), signedIn, checkForm, async (ctx) => {
    const session = ctx.state.session!;
    await webhooks.remove.execute({ partnerId: session.partnerId, endpointId: ctx.params.endpointId!, actor: actor(session) });
    done(ctx, 'deleted');
  });
}
