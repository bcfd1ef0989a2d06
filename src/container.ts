import { Container, type ServiceIdentifier } from 'inversify';
import type { Logger } from 'pino';
import type { HttpAppDependencies } from './adapters/http/app.js';
import { createHttpHandler, type HttpHandler, type HttpHandlerOptions } from './adapters/http/handler.js';
import { AuthenticateKey } from './application/authenticate-key.js';
import { EnforceRateLimit } from './application/enforce-rate-limit.js';
import { LookupById } from './application/lookup-by-id.js';
import { LookupBySku } from './application/lookup-by-sku.js';
import type { ApiKeyStore } from './application/ports/api-key-store.js';
import type { AuthFailureGuard } from './application/ports/auth-failure-guard.js';
import type { ChangesFeed } from './application/ports/changes-feed.js';
import type { CursorKeys } from './application/ports/cursor-keys.js';
import type { ProductCatalog } from './application/ports/product-catalog.js';
import type { RateLimiter } from './application/ports/rate-limiter.js';
import type { ReadinessProbe } from './application/ports/readiness-probe.js';
import { noMetrics, type ServiceMetrics } from './application/ports/service-metrics.js';
import { ReadChanges } from './application/read-changes.js';
import type { PortalUseCases } from './adapters/portal/portal-parts.js';
import { MemorySignInAddressBudget } from './adapters/memory/memory-sign-in-address-budget.js';
import { AcceptInvitation } from './application/accept-invitation.js';
import { CheckInvitation } from './application/check-invitation.js';
import { IssueApiKey } from './application/issue-api-key.js';
import type { KeyUsage } from './application/key-usage.js';
import { ListApiKeys, type UnwrittenKeyUsage } from './application/list-api-keys.js';
import { PasswordHashGate } from './application/password-hash-gate.js';
import type { AdminAccounts } from './application/ports/admin-accounts.js';
import type { AdminSessions } from './application/ports/admin-sessions.js';
import type { ApiKeyAdmin, KeyChangeAnnouncer } from './application/ports/api-key-admin.js';
import type { AuditLog } from './application/ports/audit-log.js';
import { systemClock, type Clock } from './application/ports/clock.js';
import type { Invitations } from './application/ports/invitations.js';
import type { SignInThrottle } from './application/ports/sign-in-throttle.js';
import { ReadAuditLog } from './application/read-audit-log.js';
import { ReplaceApiKey } from './application/replace-api-key.js';
import { ResumeSession } from './application/resume-session.js';
import { RevokeApiKey } from './application/revoke-api-key.js';
import { SignIn } from './application/sign-in.js';
import { SignOut } from './application/sign-out.js';

/** The adapters a deployment chose, one per port. */
export interface Infrastructure {
  readonly catalog: ProductCatalog;
  readonly changes: ChangesFeed;
  /** The key the deployment signs its changes-feed cursors with. */
  readonly cursorKeys: CursorKeys;
  readonly keys: ApiKeyStore;
  readonly limiter: RateLimiter;
  readonly authFailures: AuthFailureGuard;
  readonly readiness: ReadinessProbe;
  readonly logger: Logger;
  /** Told of every key that authenticates, for "last used"; none in tests that do not read it. */
  readonly keyUsage?: KeyUsage;
  /** Where requests are counted; none without (METRICS_PORT=0, and tests that do not read them). */
  readonly metrics?: ServiceMetrics;
}

export const TOKENS = {
  ProductCatalog: Symbol.for('ProductCatalog') as ServiceIdentifier<ProductCatalog>,
  ChangesFeed: Symbol.for('ChangesFeed') as ServiceIdentifier<ChangesFeed>,
  CursorKeys: Symbol.for('CursorKeys') as ServiceIdentifier<CursorKeys>,
  ApiKeyStore: Symbol.for('ApiKeyStore') as ServiceIdentifier<ApiKeyStore>,
  RateLimiter: Symbol.for('RateLimiter') as ServiceIdentifier<RateLimiter>,
  AuthFailureGuard: Symbol.for('AuthFailureGuard') as ServiceIdentifier<AuthFailureGuard>,
  ReadinessProbe: Symbol.for('ReadinessProbe') as ServiceIdentifier<ReadinessProbe>,
  Logger: Symbol.for('Logger') as ServiceIdentifier<Logger>,
  ServiceMetrics: Symbol.for('ServiceMetrics') as ServiceIdentifier<ServiceMetrics>,
  AuthenticateKey: Symbol.for('AuthenticateKey') as ServiceIdentifier<AuthenticateKey>,
  EnforceRateLimit: Symbol.for('EnforceRateLimit') as ServiceIdentifier<EnforceRateLimit>,
  LookupBySku: Symbol.for('LookupBySku') as ServiceIdentifier<LookupBySku>,
  LookupById: Symbol.for('LookupById') as ServiceIdentifier<LookupById>,
  ReadChanges: Symbol.for('ReadChanges') as ServiceIdentifier<ReadChanges>,
  HttpDependencies: Symbol.for('HttpDependencies') as ServiceIdentifier<HttpAppDependencies>,
};

/** Binds the chosen adapters to their ports and the use cases to them; a fresh container each call. */
export function createContainer(infrastructure: Infrastructure): Container {
  const container = new Container({ defaultScope: 'Singleton' });
  container.bind(TOKENS.ProductCatalog).toConstantValue(infrastructure.catalog);
  container.bind(TOKENS.ChangesFeed).toConstantValue(infrastructure.changes);
  container.bind(TOKENS.CursorKeys).toConstantValue(infrastructure.cursorKeys);
  container.bind(TOKENS.ApiKeyStore).toConstantValue(infrastructure.keys);
  container.bind(TOKENS.RateLimiter).toConstantValue(infrastructure.limiter);
  container.bind(TOKENS.AuthFailureGuard).toConstantValue(infrastructure.authFailures);
  container.bind(TOKENS.ReadinessProbe).toConstantValue(infrastructure.readiness);
  container.bind(TOKENS.Logger).toConstantValue(infrastructure.logger);
  container.bind(TOKENS.ServiceMetrics).toConstantValue(infrastructure.metrics ?? noMetrics);
  container.bind(TOKENS.AuthenticateKey).toResolvedValue(
    (keys: ApiKeyStore, guard: AuthFailureGuard) => new AuthenticateKey(keys, guard, infrastructure.keyUsage),
    [TOKENS.ApiKeyStore, TOKENS.AuthFailureGuard],
  );
  container.bind(TOKENS.EnforceRateLimit).toResolvedValue(
    (limiter: RateLimiter, keys: ApiKeyStore) => new EnforceRateLimit(limiter, keys),
    [TOKENS.RateLimiter, TOKENS.ApiKeyStore],
  );
  container.bind(TOKENS.LookupBySku).toResolvedValue((catalog: ProductCatalog) => new LookupBySku(catalog), [TOKENS.ProductCatalog]);
  container.bind(TOKENS.LookupById).toResolvedValue((catalog: ProductCatalog) => new LookupById(catalog), [TOKENS.ProductCatalog]);
  container.bind(TOKENS.ReadChanges).toResolvedValue(
    (feed: ChangesFeed, cursorKeys: CursorKeys) => new ReadChanges(feed, cursorKeys, systemClock),
    [TOKENS.ChangesFeed, TOKENS.CursorKeys],
  );
  container.bind(TOKENS.HttpDependencies).toResolvedValue(
    (
      authenticateKey: AuthenticateKey, enforceRateLimit: EnforceRateLimit, lookupBySku: LookupBySku, lookupById: LookupById,
      readChanges: ReadChanges, readiness: ReadinessProbe, logger: Logger, metrics: ServiceMetrics,
    ) => ({ authenticateKey, enforceRateLimit, lookupBySku, lookupById, readChanges, readiness, logger, metrics }),
    [
      TOKENS.AuthenticateKey, TOKENS.EnforceRateLimit, TOKENS.LookupBySku, TOKENS.LookupById, TOKENS.ReadChanges, TOKENS.ReadinessProbe, TOKENS.Logger,
      TOKENS.ServiceMetrics,
    ],
  );
  return container;
}

/** The request handler node:http serves: the lookup fast path, then the Koa application. */
export function createHandler(infrastructure: Infrastructure, options: HttpHandlerOptions = {}): HttpHandler {
  return createHttpHandler(createContainer(infrastructure).get(TOKENS.HttpDependencies), options);
}

/** The adapters behind the partner portal, one per port. */
export interface PortalInfrastructure {
  readonly keys: ApiKeyAdmin;
  readonly accounts: AdminAccounts;
  readonly invitations: Invitations;
  readonly sessions: AdminSessions;
  readonly throttle: SignInThrottle;
  readonly audit: AuditLog;
  /** Tells the other instances of a key issued or revoked (Redis); nobody to tell on one instance. */
  readonly announcer: KeyChangeAnnouncer;
  /** This instance's uses of keys not written yet. */
  readonly usage: UnwrittenKeyUsage;
  readonly clock: Clock;
}

/** The use cases the portal drives, over the chosen adapters: the key ones are the CLI's too. */
export function createPortalUseCases(p: PortalInfrastructure): PortalUseCases {
  // Both guard this process's own hashing, so they live in it whatever the storage.
  const hashes = new PasswordHashGate();
  return {
    signIn: new SignIn(p.accounts, p.sessions, p.throttle, p.audit, p.clock, new MemorySignInAddressBudget(), hashes),
    signOut: new SignOut(p.sessions),
    resumeSession: new ResumeSession(p.sessions, p.clock),
    checkInvitation: new CheckInvitation(p.invitations, p.clock),
    acceptInvitation: new AcceptInvitation(p.invitations, p.accounts, p.sessions, p.audit, p.clock, hashes),
    issueKey: new IssueApiKey(p.keys, p.announcer, p.audit, p.clock),
    replaceKey: new ReplaceApiKey(p.keys, p.announcer, p.audit, p.clock),
    revokeKey: new RevokeApiKey(p.keys, p.announcer, p.audit, p.clock),
    listKeys: new ListApiKeys(p.keys, p.usage),
    readAuditLog: new ReadAuditLog(p.audit),
  };
}
