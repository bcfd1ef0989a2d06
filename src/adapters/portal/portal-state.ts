import type Router from '@koa/router';
import type { Span } from '@opentelemetry/api';
import type { ParameterizedContext } from 'koa';
import type { AdminSession } from '../../domain/admin.js';

/** What a portal request carries from one middleware to the next. */
export interface PortalState {
  /** The route template the request log and metrics name it by, never its path. */
  route: string;
  /** The request's server span, when it is traced: its log line names it. */
  span?: Span;
  /** The live session the cookie names, and the cookie's value, on the routes that resolve one. */
  session?: AdminSession;
  sessionId?: string;
  /** The form, read and let through by the CSRF check. */
  form?: URLSearchParams;
  /** The refused form shown again with the refusal's message on it, on the routes that have one. */
  formAgain?: (message: string) => string | Promise<string>;
}

export type PortalContext = ParameterizedContext<PortalState>;

export type PortalRouter = Router<PortalState>;
