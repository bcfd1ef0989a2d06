import { AdminError } from '../../domain/admin-errors.js';
import { KEY_MODES, modeOfKey, type KeyMode } from '../../domain/api-key.js';
import { checkForm } from './form-csrf.js';
import { seeOther, sendPage } from './portal-answers.js';
import { apiKeysPage, newKeyPage, revokePage, viewerOf } from './portal-pages.js';
import type { PortalParts } from './portal-parts.js';
import { PORTAL_PATHS } from './portal-paths.js';
import type { PortalContext, PortalRouter } from './portal-state.js';
import { named } from './request-log.js';
import { handOver, takeOver } from './shown-once.js';

const KEY_PATH = `${PORTAL_PATHS.apiKeys}/:keyId`;

/** The mode "Create key" has checked: a live key, as every key was before test keys. */
const DEFAULT_MODE: KeyMode = 'live';
/** What the form says when shown again for a mode that is neither. */
const UNKNOWN_MODE = 'Choose the mode of the key: Live or Test.';

/**
 * The mode a "Create key" form chose: exactly a mode's name, or null to refuse it. A form without
 * the field gets the default the form has checked, as a script written before test keys sends it.
 */
function chosenMode(field: string | null): KeyMode | null {
  if (field === null) return DEFAULT_MODE;
  return KEY_MODES.find((mode) => mode === field) ?? null;
}

/** A map, not an object: `?notice=__proto__` must find nothing. */
const NOTICES: ReadonlyMap<string, string> = new Map([
  ['revoked', 'The key is revoked: requests with it are refused from now on.'],
  ['not-announced', 'The change is saved, but the other servers could not be told at once: it may take up to a minute to apply everywhere.'],
]);

/** The partner's API keys: the list (the portal's home), create, replace and revoke, each new key shown once. */
export function addApiKeyRoutes(router: PortalRouter, { useCases, cookies, signedIn, clock, logger }: PortalParts): void {
  /** Hands the new key to the next page load only, sealed in a short-lived cookie, and redirects there. */
  const showOnce = (ctx: PortalContext, issued: { id: string; key: string }, announceFailure: string | null): void => {
    handOver(ctx, 'new-key', PORTAL_PATHS.apiKeys, `${issued.id}\n${issued.key}`, cookies, clock);
    if (announceFailure !== null) logger.warn({ keyId: issued.id, reason: announceFailure }, 'portal: key change not announced through Redis');
    seeOther(ctx, announceFailure === null ? PORTAL_PATHS.apiKeys : `${PORTAL_PATHS.apiKeys}?notice=not-announced`);
  };

  router.get('/portal', named('/portal'), (ctx) => ctx.redirect(PORTAL_PATHS.apiKeys));
  router.get('/portal/', named('/portal'), (ctx) => ctx.redirect(PORTAL_PATHS.apiKeys));

  router.get(PORTAL_PATHS.apiKeys, named(PORTAL_PATHS.apiKeys), signedIn, async (ctx) => {
    const session = ctx.state.session!;
    const [id, key] = takeOver(ctx, 'new-key', PORTAL_PATHS.apiKeys, cookies, clock)?.split('\n') ?? [];
    // The key's prefix names its mode, so the sealed cookie need not carry it.
    const newKey = id !== undefined && key !== undefined ? { id, key, mode: modeOfKey(key) } : null;
    const keys = await useCases.listKeys.execute({ partnerId: session.partnerId });
    const notice = typeof ctx.query.notice === 'string' ? NOTICES.get(ctx.query.notice) ?? null : null;
    sendPage(ctx, 200, apiKeysPage({ viewer: viewerOf(session), keys, newKey, notice }));
  });

  router.get(`${PORTAL_PATHS.apiKeys}/new`, named(`${PORTAL_PATHS.apiKeys}/new`), signedIn, (ctx) => {
    sendPage(ctx, 200, newKeyPage({ viewer: viewerOf(ctx.state.session!), error: null, label: '', mode: DEFAULT_MODE }));
  });

  router.post(PORTAL_PATHS.apiKeys, named(PORTAL_PATHS.apiKeys), signedIn, checkForm, async (ctx) => {
    const session = ctx.state.session!;
    const form = ctx.state.form!;
    const label = (form.get('label') ?? '').trim();
    const mode = chosenMode(form.get('mode'));
    const again = (message: string, checked: KeyMode): string => newKeyPage({ viewer: viewerOf(session), error: message, label, mode: checked });
    // Answered as a refused label is: the form again with 400, and nothing created.
    if (mode === null) return sendPage(ctx, 400, again(UNKNOWN_MODE, DEFAULT_MODE));
    ctx.state.formAgain = (message) => again(message, mode);
    const { issued, announceFailure } = await useCases.issueKey.execute({ partnerId: session.partnerId, mode, label: label === '' ? null : label, actor: { adminEmail: session.email } });
    showOnce(ctx, issued, announceFailure);
  });

  router.get(`${KEY_PATH}/revoke`, named(`${KEY_PATH}/revoke`), signedIn, async (ctx) => {
    const session = ctx.state.session!;
    const keyId = ctx.params.keyId!;
    const key = (await useCases.listKeys.execute({ partnerId: session.partnerId })).find((k) => k.id === keyId);
    // Refused as revoking it would be: another partner's key is not found, as a missing one is.
    if (key === undefined) throw new AdminError('key_not_found', `no API key with id ${JSON.stringify(keyId)}`);
    if (key.revokedAt !== null) return seeOther(ctx, PORTAL_PATHS.apiKeys);
    sendPage(ctx, 200, revokePage({ viewer: viewerOf(session), key }));
  });

  router.post(`${KEY_PATH}/revoke`, named(`${KEY_PATH}/revoke`), signedIn, checkForm, async (ctx) => {
    const session = ctx.state.session!;
    await useCases.revokeKey.execute({ partnerId: session.partnerId, keyId: ctx.params.keyId!, actor: { adminEmail: session.email } });
    seeOther(ctx, `${PORTAL_PATHS.apiKeys}?notice=revoked`);
  });

  router.post(`${KEY_PATH}/replace`, named(`${KEY_PATH}/replace`), signedIn, checkForm, async (ctx) => {
    const session = ctx.state.session!;
    const { issued, announceFailure } = await useCases.replaceKey.execute({ partnerId: session.partnerId, keyId: ctx.params.keyId!, actor: { adminEmail: session.email } });
    showOnce(ctx, issued, announceFailure);
  });
}
