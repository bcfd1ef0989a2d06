import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { AcceptInvitation } from '../../application/admin-sign-in/accept-invitation.js';
import type { CheckInvitation } from '../../application/admin-sign-in/check-invitation.js';
import type { IssueApiKey } from '../../application/keys/issue-api-key.js';
import type { ListApiKeys } from '../../application/keys/list-api-keys.js';
import type { Clock } from '../../application/common/clock.js';
import type { ReadAuditLog } from '../../application/admin-sign-in/read-audit-log.js';
import type { ReplaceApiKey } from '../../application/keys/replace-api-key.js';
import type { ResumeSession } from '../../application/admin-sign-in/resume-session.js';
import type { RevokeApiKey } from '../../application/keys/revoke-api-key.js';
import type { SignIn } from '../../application/admin-sign-in/sign-in.js';
import type { SignOut } from '../../application/admin-sign-in/sign-out.js';
import type { WebhookUseCases } from '../../application/webhooks/webhook-use-cases.js';
import type { ClientAddressOf } from '../listening/client-address.js';
import type { CookieOptions } from './portal-cookies.js';
import type { PortalState } from './portal-state.js';

/** The use cases the portal drives: the same ones the CLI does for keys and webhook endpoints. */
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
  readonly webhooks: WebhookUseCases;
}

/** What each group of pages is built from. */
export interface PortalParts {
  readonly useCases: PortalUseCases;
  readonly cookies: CookieOptions;
  /** Runs before every page for signed-in admins. */
  readonly signedIn: Middleware<PortalState>;
  /** The time a new key's cookie is sealed and opened by. */
  readonly clock: Clock;
  readonly logger: Logger;
  /** Where a request comes from, for the sign-in budget per address. */
  readonly clientAddress: ClientAddressOf;
}
