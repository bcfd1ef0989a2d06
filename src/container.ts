import { Container, type ServiceIdentifier } from 'inversify';
import type { Logger } from 'pino';
import type { ApiUseCases } from './adapters/http/operations.js';
import type { PipelineDependencies } from './adapters/http/pipeline.js';
import { createHttpHandler, type HttpHandler, type HttpHandlerOptions } from './adapters/http/handler.js';
import { AuthenticateKey } from './application/access/authenticate-key.js';
import { EnforceRateLimit } from './application/access/enforce-rate-limit.js';
import { LookupById } from './application/lookup/lookup-by-id.js';
import { LookupBySku } from './application/lookup/lookup-by-sku.js';
import type { ApiKeyStore } from './application/access/api-key-store.js';
import type { AuthFailureGuard } from './application/access/auth-failure-guard.js';
import type { ChangesFeed } from './application/changes/changes-feed.js';
import type { CursorKeys } from './application/changes/cursor-keys.js';
import type { ProductCatalog } from './application/lookup/product-catalog.js';
import type { RateLimiter } from './application/access/rate-limiter.js';
import type { ReadinessProbe } from './application/shared/readiness-probe.js';
import { noMetrics, type ServiceMetrics } from './adapters/service-metrics.js';
import { ReadChanges } from './application/changes/read-changes.js';
import type { PortalUseCases } from './adapters/portal/portal-app.js';
import { MemorySignInAddressBudget } from './adapters/memory/memory-sign-in-address-budget.js';
import { AcceptInvitation } from './application/admin-sign-in/accept-invitation.js';
import { CheckInvitation } from './application/admin-sign-in/check-invitation.js';
import { IssueApiKey } from './application/keys/issue-api-key.js';
import type { KeyUsage } from './application/access/key-usage.js';
import { ListApiKeys, type UnwrittenKeyUsage } from './application/keys/list-api-keys.js';
import { PasswordHashGate } from './application/admin-sign-in/password-hash-gate.js';
import type { AdminAccounts } from './application/admin-sign-in/admin-accounts.js';
import type { AdminSessions } from './application/admin-sign-in/admin-sessions.js';
import type { ApiKeyAdmin, KeyChangeAnnouncer } from './application/keys/api-key-admin.js';
import type { AuditLog } from './application/admin-sign-in/audit-log.js';
import { systemClock, type Clock } from './application/shared/clock.js';
import type { Invitations } from './application/admin-sign-in/invitations.js';
import type { SignInThrottle } from './application/admin-sign-in/sign-in-throttle.js';
import { ReadAuditLog } from './application/admin-sign-in/read-audit-log.js';
import { ReplaceApiKey } from './application/keys/replace-api-key.js';
import { ResumeSession } from './application/admin-sign-in/resume-session.js';
import { RevokeApiKey } from './application/keys/revoke-api-key.js';
import { SignIn } from './application/admin-sign-in/sign-in.js';
import { SignOut } from './application/admin-sign-in/sign-out.js';

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
  ApiUseCases: Symbol.for('ApiUseCases') as ServiceIdentifier<ApiUseCases>,
  HttpDependencies: Symbol.for('HttpDependencies') as ServiceIdentifier<PipelineDependencies<ApiUseCases>>,
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
  container.bind(TOKENS.ApiUseCases).toResolvedValue(
    (lookupBySku: LookupBySku, lookupById: LookupById, readChanges: ReadChanges, readiness: ReadinessProbe) => ({ lookupBySku, lookupById, readChanges, readiness }),
    [TOKENS.LookupBySku, TOKENS.LookupById, TOKENS.ReadChanges, TOKENS.ReadinessProbe],
  );
  container.bind(TOKENS.HttpDependencies).toResolvedValue(
    (useCases: ApiUseCases, authenticateKey: AuthenticateKey, enforceRateLimit: EnforceRateLimit, logger: Logger, metrics: ServiceMetrics) =>
      ({ useCases, authenticateKey, enforceRateLimit, logger, metrics }),
    [TOKENS.ApiUseCases, TOKENS.AuthenticateKey, TOKENS.EnforceRateLimit, TOKENS.Logger, TOKENS.ServiceMetrics],
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
