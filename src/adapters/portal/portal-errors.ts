import { setTimeout } from 'node:timers/promises';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { TIMEOUTS } from '../timeouts.js';
import { isStorageUnavailable } from '../../application/common/storage-unavailable.js';
import { AdminError, type AdminErrorCode } from '../../domain/admin-errors.js';
import { WebhookError, type WebhookErrorCode } from '../../domain/webhook-errors.js';
import { FormError } from './form-body.js';
import { sendPage } from './portal-answers.js';
import { messagePage, viewerOf, type Viewer } from './portal-pages.js';
import { PORTAL_PATHS } from './portal-paths.js';
import type { PortalState } from './portal-state.js';

/** Refusals the portal makes itself, before any use case runs. */
export type PortalRefusalCode = 'csrf_failed' | 'signed_out';

export class PortalRefusal extends Error {
  constructor(readonly code: PortalRefusalCode) {
    super(code);
    this.name = 'PortalRefusal';
  }
}

interface Link {
  readonly href: string;
  readonly label: string;
}

const SIGN_IN: Link = { href: PORTAL_PATHS.login, label: 'Sign in' };
const BACK_TO_KEYS: Link = { href: PORTAL_PATHS.apiKeys, label: 'Back to API keys' };
const BACK_TO_WEBHOOKS: Link = { href: PORTAL_PATHS.webhooks, label: 'Back to webhooks' };

/** A refusal's page of its own: its text is the error's message unless given here. */
interface OwnPage {
  readonly title: string;
  readonly text?: string;
  readonly onward: Link;
}

interface UseCaseRefusal {
  readonly status: number;
  /** 'form': the refused form again, the error's message on it. */
  readonly shows: 'form' | OwnPage;
  /** A flood that waits for each answer is slowed to one attempt per connection per delay. */
  readonly heldBack?: true;
}

const INVITATION_NOT_VALID: OwnPage = { title: 'Invitation not valid', onward: SIGN_IN };

/**
 * The one table from an admin error code to the portal's answer (docs/portal.md), with the webhook
 * codes' below it. Codes only the command line meets have an answer too, so that a new code cannot
 * go unanswered.
 */
const ADMIN_REFUSALS: Readonly<Record<AdminErrorCode, UseCaseRefusal>> = {
  partner_not_found: { status: 400, shows: 'form' },
  invalid_email: { status: 400, shows: 'form' },
  admin_exists: { status: 410, shows: INVITATION_NOT_VALID },
  invalid_invitation: { status: 410, shows: INVITATION_NOT_VALID },
  password_too_short: { status: 400, shows: 'form' },
  password_too_long: { status: 400, shows: 'form' },
  passwords_differ: { status: 400, shows: 'form' },
  sign_in_failed: { status: 401, shows: 'form' },
  sign_in_locked: { status: 429, shows: 'form' },
  sign_in_throttled: { status: 429, shows: 'form', heldBack: true },
  sign_in_busy: { status: 503, shows: 'form' },
  // The use case's message names the key id, for the command line; an admin has the id in the address.
  key_not_found: { status: 404, shows: { title: 'Key not found', text: 'There is no such key among your partner\'s keys.', onward: BACK_TO_KEYS } },
  key_not_active: { status: 409, shows: { title: 'Key already revoked', onward: BACK_TO_KEYS } },
  invalid_label: { status: 400, shows: 'form' },
};

/** The same for webhook endpoints' codes: a refused "Add endpoint" form is shown again with the use case's reason. */
const WEBHOOK_REFUSALS: Readonly<Record<WebhookErrorCode, UseCaseRefusal>> = {
  // The admin's own partner exists while it is signed in; only the command line can name another.
  partner_not_found: { status: 400, shows: 'form' },
  invalid_webhook_url: { status: 400, shows: 'form' },
  invalid_webhook_description: { status: 400, shows: 'form' },
  webhook_endpoint_limit: { status: 409, shows: 'form' },
  // As for keys: the message names the id for the command line; an admin has it in the address.
  webhook_endpoint_not_found: {
    status: 404, shows: { title: 'Endpoint not found', text: 'There is no such webhook endpoint among your partner\'s endpoints.', onward: BACK_TO_WEBHOOKS },
  },
  webhook_message_not_found: {
    status: 404, shows: { title: 'Message not found', text: 'There is no such message among your partner\'s messages to send again.', onward: BACK_TO_WEBHOOKS },
  },
};

const PORTAL_REFUSALS: Readonly<Record<PortalRefusalCode, { readonly status: number; readonly page: OwnPage & { readonly text: string } }>> = {
  csrf_failed: {
    status: 403,
    page: { title: 'Form refused', text: 'This form has expired or did not come from this site. Go back, reload the page, and try again.', onward: SIGN_IN },
  },
  signed_out: { status: 403, page: { title: 'Signed out', text: 'Your session has ended. Sign in again.', onward: SIGN_IN } },
};

/** How the portal answers a refusal, apart from Koa: the error middleware writes it. */
interface Refusal {
  readonly status: number;
  /** For a refusal that passes: whole seconds after which trying again may succeed. */
  readonly retryAfterSeconds: number | null;
  /** How long to hold the answer back (0: at once). */
  readonly delayMs: number;
  /** A page of its own, or the message to show on the refused form again. */
  readonly page: string | { readonly formMessage: string };
}

/** The answer to a refusal, the portal's own or a use case's, shown to `viewer`; null for any other error: unexpected. */
function refusalFor(thrown: unknown, viewer: Viewer | null): Refusal | null {
  if (thrown instanceof FormError) return { status: thrown.status, retryAfterSeconds: null, delayMs: 0, page: messagePage('Form refused', thrown.message, null) };
  if (thrown instanceof PortalRefusal) {
    const { status, page } = PORTAL_REFUSALS[thrown.code];
    return { status, retryAfterSeconds: null, delayMs: 0, page: ownPage(page, page.text, viewer) };
  }
  let refusal: UseCaseRefusal;
  if (thrown instanceof AdminError) refusal = ADMIN_REFUSALS[thrown.code];
  else if (thrown instanceof WebhookError) refusal = WEBHOOK_REFUSALS[thrown.code];
  else return null;
  const { status, shows, heldBack } = refusal;
  return {
    status,
    retryAfterSeconds: thrown instanceof AdminError ? thrown.retryAfterSeconds : null,
    delayMs: heldBack === true ? TIMEOUTS.heldBackAnswerDelayMs : 0,
    page: shows === 'form' ? { formMessage: thrown.message } : ownPage(shows, shows.text ?? thrown.message, viewer),
  };
}

/** "Sign in" is offered only to a visitor who is not signed in. */
function ownPage(page: OwnPage, text: string, viewer: Viewer | null): string {
  return messagePage(page.title, text, viewer, viewer !== null && page.onward === SIGN_IN ? undefined : page.onward);
}

/**
 * Answers what the rest of the request threw: a refusal by its table; storage that cannot be
 * reached, or that refuses writes (a primary's address leading to a read-only server after a
 * failover), 503 with a time to retry, since nothing was done and it passes; anything else 500. Both
 * are logged.
 */
export function answerErrors(logger: Logger): Middleware<PortalState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      const { session, formAgain } = ctx.state;
      const refusal = refusalFor(thrown, session === undefined ? null : viewerOf(session));
      let unexpected = thrown;
      // A refusal meant for a form, from a route that shows none, is not one the route expects.
      if (refusal !== null && (typeof refusal.page === 'string' || formAgain !== undefined)) {
        try {
          if (refusal.delayMs > 0) await setTimeout(refusal.delayMs);
          if (refusal.retryAfterSeconds !== null) ctx.set('Retry-After', String(refusal.retryAfterSeconds));
          sendPage(ctx, refusal.status, typeof refusal.page === 'string' ? refusal.page : await formAgain!(refusal.page.formMessage));
          return;
        } catch (failure) {
          // Showing a form again may read the store again (the invitation's email), which can fail in turn.
          unexpected = failure;
        }
      }
      if (isStorageUnavailable(unexpected)) {
        logger.warn({ reason: unexpected instanceof Error ? unexpected.message : String(unexpected), route: ctx.state.route }, 'portal request failed: the database cannot be reached or written now');
        ctx.set('Retry-After', String(TIMEOUTS.storageRetryAfterSeconds));
        sendPage(ctx, 503, messagePage('Try again in a moment', 'The portal cannot reach its database just now, and nothing was changed. Try again in a moment.', null));
        return;
      }
      logger.error({ err: unexpected, route: ctx.state.route }, 'portal request failed');
      sendPage(ctx, 500, messagePage('Something went wrong', 'The request could not be completed. Try again in a moment.', null));
    }
  };
}
