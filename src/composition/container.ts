import { Container, type ServiceIdentifier } from 'inversify';
import type { Logger } from 'pino';
import type { ApiUseCases } from '../adapters/http/operations.js';
import type { PipelineDependencies } from '../adapters/http/pipeline.js';
import { AuthenticateKey } from '../application/access/authenticate-key.js';
import type { CountOverlap } from '../application/access/count-overlap.js';
import { EnforceRateLimit } from '../application/access/enforce-rate-limit.js';
import { LookupById } from '../application/lookup/lookup-by-id.js';
import { LookupBySku } from '../application/lookup/lookup-by-sku.js';
import { LookupManyById } from '../application/lookup/lookup-many-by-id.js';
import { LookupManyBySku } from '../application/lookup/lookup-many-by-sku.js';
import type { ApiKeyStore } from '../application/access/api-key-store.js';
import type { AuthFailureGuard } from '../application/access/auth-failure-guard.js';
import type { ChangesFeed } from '../application/changes/changes-feed.js';
import type { CursorKeys } from '../application/changes/cursor-keys.js';
import type { ProductCatalog } from '../application/lookup/product-catalog.js';
import type { RateLimiter } from '../application/access/rate-limiter.js';
import type { ReadinessProbe } from '../application/common/readiness-probe.js';
import { noMetrics, type ServiceMetrics } from '../adapters/service-metrics.js';
import { ReadChanges } from '../application/changes/read-changes.js';
import type { PortalUseCases } from '../adapters/portal/portal-parts.js';
import { MemorySignInAddressBudget } from '../adapters/memory/memory-sign-in-address-budget.js';
import { AcceptInvitation } from '../application/admin-sign-in/accept-invitation.js';
import { CheckInvitation } from '../application/admin-sign-in/check-invitation.js';
import { IssueApiKey } from '../application/keys/issue-api-key.js';
import type { KeyUsage } from '../application/access/key-usage.js';
import { ListApiKeys, type UnwrittenKeyUsage } from '../application/keys/list-api-keys.js';
import { PasswordHashGate } from '../application/admin-sign-in/password-hash-gate.js';
import type { AdminAccounts } from '../application/admin-sign-in/admin-accounts.js';
import type { AdminSessions } from '../application/admin-sign-in/admin-sessions.js';
import type { ApiKeyAdmin, KeyChangeAnnouncer } from '../application/keys/api-key-admin.js';
import type { AuditLog } from '../application/admin-sign-in/audit-log.js';
import { systemClock, type Clock } from '../application/common/clock.js';
import type { Invitations } from '../application/admin-sign-in/invitations.js';
import type { SignInThrottle } from '../application/admin-sign-in/sign-in-throttle.js';
import { ReadAuditLog } from '../application/admin-sign-in/read-audit-log.js';
import { ReplaceApiKey } from '../application/keys/replace-api-key.js';
import { ResumeSession } from '../application/admin-sign-in/resume-session.js';
import { RevokeApiKey } from '../application/keys/revoke-api-key.js';
import { SignIn } from '../application/admin-sign-in/sign-in.js';
import { SignOut } from '../application/admin-sign-in/sign-out.js';
import { InviteAdmin } from '../application/admin-sign-in/invite-admin.js';
import { DeliverWebhooks, type DeliveryLimits, type DeliveryMetrics } from '../application/webhooks/deliver-webhooks.js';
import type { WebhookOutbox } from '../application/webhooks/webhook-outbox.js';
import type { WebhookSender } from '../application/webhooks/webhook-sender.js';
import { ListWebhookDeliveries } from '../application/webhooks/list-webhook-deliveries.js';
import { SendWebhookTest } from '../application/webhooks/send-webhook-test.js';
import { ResendWebhookMessage } from '../application/webhooks/resend-webhook-message.js';
import { PruneAdminRecords } from '../application/admin-sign-in/prune-admin-records.js';
import { ImportCatalog } from '../application/catalog-import/import-catalog.js';
import { demoProducts } from '../adapters/catalog-file/catalog-file.js';
import type { CatalogStore } from '../application/catalog-import/catalog-store.js';
import { AddWebhookEndpoint } from '../application/webhooks/add-webhook-endpoint.js';
import { ListWebhookEndpoints } from '../application/webhooks/list-webhook-endpoints.js';
import { RemoveWebhookEndpoint } from '../application/webhooks/remove-webhook-endpoint.js';
import { RevealWebhookSecret } from '../application/webhooks/reveal-webhook-secret.js';
import { RotateWebhookSecret } from '../application/webhooks/rotate-webhook-secret.js';
import { SetWebhookEndpointStatus } from '../application/webhooks/set-webhook-endpoint-status.js';
import type { WebhookEndpointStore } from '../application/webhooks/webhook-endpoint-store.js';
import type { WebhookUseCases } from '../application/webhooks/webhook-use-cases.js';
import type { WebhookUrlOptions } from '../domain/webhook-url.js';

/** The adapters a deployment chose for the partner API, one per port. */
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
  /** With a shared count and watched changes: lookups read while their count is under way. */
  readonly overlap?: CountOverlap;
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
  LookupManyBySku: Symbol.for('LookupManyBySku') as ServiceIdentifier<LookupManyBySku>,
  LookupManyById: Symbol.for('LookupManyById') as ServiceIdentifier<LookupManyById>,
  ReadChanges: Symbol.for('ReadChanges') as ServiceIdentifier<ReadChanges>,
  ApiUseCases: Symbol.for('ApiUseCases') as ServiceIdentifier<ApiUseCases>,
  HttpDependencies: Symbol.for('HttpDependencies') as ServiceIdentifier<PipelineDependencies<ApiUseCases>>,
  ApiKeyAdmin: Symbol.for('ApiKeyAdmin') as ServiceIdentifier<ApiKeyAdmin>,
  AdminAccounts: Symbol.for('AdminAccounts') as ServiceIdentifier<AdminAccounts>,
  Invitations: Symbol.for('Invitations') as ServiceIdentifier<Invitations>,
  AdminSessions: Symbol.for('AdminSessions') as ServiceIdentifier<AdminSessions>,
  SignInThrottle: Symbol.for('SignInThrottle') as ServiceIdentifier<SignInThrottle>,
  AuditLog: Symbol.for('AuditLog') as ServiceIdentifier<AuditLog>,
  KeyChangeAnnouncer: Symbol.for('KeyChangeAnnouncer') as ServiceIdentifier<KeyChangeAnnouncer>,
  UnwrittenKeyUsage: Symbol.for('UnwrittenKeyUsage') as ServiceIdentifier<UnwrittenKeyUsage>,
  Clock: Symbol.for('Clock') as ServiceIdentifier<Clock>,
  PasswordHashGate: Symbol.for('PasswordHashGate') as ServiceIdentifier<PasswordHashGate>,
  PortalUseCases: Symbol.for('PortalUseCases') as ServiceIdentifier<PortalUseCases>,
  InviteAdmin: Symbol.for('InviteAdmin') as ServiceIdentifier<InviteAdmin>,
  PruneAdminRecords: Symbol.for('PruneAdminRecords') as ServiceIdentifier<PruneAdminRecords>,
  CatalogStore: Symbol.for('CatalogStore') as ServiceIdentifier<CatalogStore>,
  ImportCatalog: Symbol.for('ImportCatalog') as ServiceIdentifier<ImportCatalog>,
  WebhookEndpointStore: Symbol.for('WebhookEndpointStore') as ServiceIdentifier<WebhookEndpointStore>,
  WebhookUrlOptions: Symbol.for('WebhookUrlOptions') as ServiceIdentifier<WebhookUrlOptions>,
  WebhookUseCases: Symbol.for('WebhookUseCases') as ServiceIdentifier<WebhookUseCases>,
  DeliverWebhooks: Symbol.for('DeliverWebhooks') as ServiceIdentifier<DeliverWebhooks>,
};

/** The adapters behind partner admins and their keys: the portal's, and the operator commands'. */
export interface AdminInfrastructure {
  readonly keys: ApiKeyAdmin;
  readonly accounts: AdminAccounts;
  readonly invitations: Invitations;
  readonly sessions: AdminSessions;
  readonly throttle: SignInThrottle;
  readonly audit: AuditLog;
  /** Tells the other instances of a key issued or revoked (Redis); nobody to tell on one instance. */
  readonly announcer: KeyChangeAnnouncer;
  /** This instance's uses of keys not written yet; none for the CLI, which serves no requests. */
  readonly usage?: UnwrittenKeyUsage;
  readonly clock: Clock;
}

/** Without Redis there are no other instances to tell of a key change: each reads its keys from the database. */
export const nobodyToTell: KeyChangeAnnouncer = { keysChanged: () => Promise.resolve() };

/** Where partners' webhook endpoints are kept, and which targets they may name. */
export interface WebhookInfrastructure {
  readonly endpoints: WebhookEndpointStore;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: `http` and non-public addresses too (development and tests). */
  readonly allowPrivateTargets: boolean;
  /** Where messages wait, with their deliveries and every attempt. */
  readonly outbox: WebhookOutbox;
  /** A running instance's: how attempts go out, and within which limits. */
  readonly delivery?: {
    readonly sender: WebhookSender;
    readonly limits: DeliveryLimits;
    readonly metrics?: DeliveryMetrics;
  };
}

/** Where a catalog import writes, and the key its webhook messages' feed cursors are signed with. */
export interface CatalogInfrastructure {
  readonly store: CatalogStore;
  readonly cursorKeys: CursorKeys;
}

/** What a process serves: the API, the portal and the CLI each bring the parts they run. */
export interface Parts {
  readonly api?: Infrastructure;
  /** The portal's use cases need `webhooks` too: its webhooks page is one of them. */
  readonly admin?: AdminInfrastructure;
  /** Where a catalog import writes, its webhook messages included. */
  readonly catalog?: CatalogInfrastructure;
  /** Webhook endpoints; their actions are audited, so they come with `admin`. */
  readonly webhooks?: WebhookInfrastructure;
}

/**
 * The one composition root: binds the adapters each process chose to their ports, and every use case
 * to the ports it needs, the same way for the API, the portal and the CLI. A fresh container each call.
 */
export function createContainer(parts: Parts): Container {
  const container = new Container({ defaultScope: 'Singleton' });
  if (parts.api !== undefined) bindApi(container, parts.api);
  if (parts.admin !== undefined) bindAdmin(container, parts.admin);
  if (parts.catalog !== undefined) {
    const { cursorKeys } = parts.catalog;
    container.bind(TOKENS.CatalogStore).toConstantValue(parts.catalog.store);
    container.bind(TOKENS.ImportCatalog).toResolvedValue((store: CatalogStore) => new ImportCatalog(store, systemClock, cursorKeys, demoProducts), [TOKENS.CatalogStore]);
  }
  if (parts.webhooks !== undefined) {
    if (parts.admin === undefined) throw new Error('webhook endpoints need the admin parts: their audit log and clock');
    bindWebhooks(container, parts.webhooks);
  }
  return container;
}


function bindApi(container: Container, infrastructure: Infrastructure): void {
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
  container.bind(TOKENS.LookupManyBySku).toResolvedValue((catalog: ProductCatalog) => new LookupManyBySku(catalog), [TOKENS.ProductCatalog]);
  container.bind(TOKENS.LookupManyById).toResolvedValue((catalog: ProductCatalog) => new LookupManyById(catalog), [TOKENS.ProductCatalog]);
  container.bind(TOKENS.ReadChanges).toResolvedValue(
    (feed: ChangesFeed, cursorKeys: CursorKeys) => new ReadChanges(feed, cursorKeys, systemClock),
    [TOKENS.ChangesFeed, TOKENS.CursorKeys],
  );
  container.bind(TOKENS.ApiUseCases).toResolvedValue(
    (lookupBySku: LookupBySku, lookupById: LookupById, lookupManyBySku: LookupManyBySku, lookupManyById: LookupManyById, readChanges: ReadChanges, readiness: ReadinessProbe) =>
      ({ lookupBySku, lookupById, lookupManyBySku, lookupManyById, readChanges, readiness }),
    [TOKENS.LookupBySku, TOKENS.LookupById, TOKENS.LookupManyBySku, TOKENS.LookupManyById, TOKENS.ReadChanges, TOKENS.ReadinessProbe],
  );
  container.bind(TOKENS.HttpDependencies).toResolvedValue(
    (useCases: ApiUseCases, authenticateKey: AuthenticateKey, enforceRateLimit: EnforceRateLimit, logger: Logger, metrics: ServiceMetrics) =>
      ({ useCases, authenticateKey, enforceRateLimit, logger, metrics, overlap: infrastructure.overlap }),
    [TOKENS.ApiUseCases, TOKENS.AuthenticateKey, TOKENS.EnforceRateLimit, TOKENS.Logger, TOKENS.ServiceMetrics],
  );
}

function bindAdmin(container: Container, admin: AdminInfrastructure): void {
  container.bind(TOKENS.ApiKeyAdmin).toConstantValue(admin.keys);
  container.bind(TOKENS.AdminAccounts).toConstantValue(admin.accounts);
  container.bind(TOKENS.Invitations).toConstantValue(admin.invitations);
  container.bind(TOKENS.AdminSessions).toConstantValue(admin.sessions);
  container.bind(TOKENS.SignInThrottle).toConstantValue(admin.throttle);
  container.bind(TOKENS.AuditLog).toConstantValue(admin.audit);
  container.bind(TOKENS.KeyChangeAnnouncer).toConstantValue(admin.announcer);
  container.bind(TOKENS.UnwrittenKeyUsage).toConstantValue(admin.usage ?? { unwritten: () => null });
  container.bind(TOKENS.Clock).toConstantValue(admin.clock);
  // Both guard this process's own hashing, so they live in it whatever the storage.
  container.bind(TOKENS.PasswordHashGate).toConstantValue(new PasswordHashGate());
  container.bind(TOKENS.InviteAdmin).toResolvedValue(
    (keys: ApiKeyAdmin, accounts: AdminAccounts, invitations: Invitations, clock: Clock) => new InviteAdmin(keys, accounts, invitations, clock),
    [TOKENS.ApiKeyAdmin, TOKENS.AdminAccounts, TOKENS.Invitations, TOKENS.Clock],
  );
  container.bind(TOKENS.PruneAdminRecords).toResolvedValue(
    (throttle: SignInThrottle, audit: AuditLog, clock: Clock) => new PruneAdminRecords(throttle, audit, clock),
    [TOKENS.SignInThrottle, TOKENS.AuditLog, TOKENS.Clock],
  );
  container.bind(TOKENS.PortalUseCases).toResolvedValue(
    (keys: ApiKeyAdmin, accounts: AdminAccounts, invitations: Invitations, sessions: AdminSessions, throttle: SignInThrottle, audit: AuditLog,
      announcer: KeyChangeAnnouncer, usage: UnwrittenKeyUsage, clock: Clock, hashes: PasswordHashGate, webhooks: WebhookUseCases): PortalUseCases => ({
      signIn: new SignIn(accounts, sessions, throttle, audit, clock, new MemorySignInAddressBudget(), hashes),
      signOut: new SignOut(sessions),
      resumeSession: new ResumeSession(sessions, clock),
      checkInvitation: new CheckInvitation(invitations, clock),
      acceptInvitation: new AcceptInvitation(invitations, accounts, sessions, audit, clock, hashes),
      issueKey: new IssueApiKey(keys, announcer, audit, clock),
      replaceKey: new ReplaceApiKey(keys, announcer, audit, clock),
      revokeKey: new RevokeApiKey(keys, announcer, audit, clock),
      listKeys: new ListApiKeys(keys, usage),
      readAuditLog: new ReadAuditLog(audit),
      webhooks,
    }),
    [
      TOKENS.ApiKeyAdmin, TOKENS.AdminAccounts, TOKENS.Invitations, TOKENS.AdminSessions, TOKENS.SignInThrottle, TOKENS.AuditLog,
      TOKENS.KeyChangeAnnouncer, TOKENS.UnwrittenKeyUsage, TOKENS.Clock, TOKENS.PasswordHashGate, TOKENS.WebhookUseCases,
    ],
  );
}

function bindWebhooks(container: Container, webhooks: WebhookInfrastructure): void {
  container.bind(TOKENS.WebhookEndpointStore).toConstantValue(webhooks.endpoints);
  container.bind(TOKENS.WebhookUrlOptions).toConstantValue({ allowPrivateTargets: webhooks.allowPrivateTargets });
  container.bind(TOKENS.WebhookUseCases).toResolvedValue(
    (store: WebhookEndpointStore, audit: AuditLog, clock: Clock, urls: WebhookUrlOptions): WebhookUseCases => ({
      add: new AddWebhookEndpoint(store, audit, clock, urls),
      list: new ListWebhookEndpoints(store),
      revealSecret: new RevealWebhookSecret(store),
      rotateSecret: new RotateWebhookSecret(store, audit, clock),
      setStatus: new SetWebhookEndpointStatus(store, audit, clock),
      remove: new RemoveWebhookEndpoint(store, audit, clock),
      sendTest: new SendWebhookTest(store, webhooks.outbox, clock),
      deliveries: new ListWebhookDeliveries(store, webhooks.outbox),
      resend: new ResendWebhookMessage(store, webhooks.outbox, clock),
    }),
    [TOKENS.WebhookEndpointStore, TOKENS.AuditLog, TOKENS.Clock, TOKENS.WebhookUrlOptions],
  );
  const { delivery } = webhooks;
  if (delivery !== undefined) {
    container.bind(TOKENS.DeliverWebhooks).toResolvedValue(
      (store: WebhookEndpointStore, audit: AuditLog, clock: Clock) =>
        new DeliverWebhooks(webhooks.outbox, store, audit, delivery.sender, clock, delivery.limits, delivery.metrics),
      [TOKENS.WebhookEndpointStore, TOKENS.AuditLog, TOKENS.Clock],
    );
  }
}
