import { WEBHOOK_ATTEMPTS_PER_ENDPOINT, webhookAttemptsPerPartner } from './application/webhooks/deliver-webhooks.js';
import { startDeliveryLoop } from './adapters/webhooks/delivery-loop.js';
import { HttpWebhookSender } from './adapters/webhooks/http-webhook-sender.js';
import type { WebhookEndpointStore } from './application/webhooks/webhook-endpoint-store.js';
import type { WebhookOutbox } from './application/webhooks/webhook-outbox.js';
import { refusedAddress } from './domain/webhook-url.js';
import { CachedProductCatalog, withResponseCache } from './adapters/cache/cached-product-catalog.js';
import { KeySetCache, type KeySetVersionReader } from './adapters/cache/key-set-cache.js';
import { clientAddressResolver, trustedProxies, type TrustedProxies } from './adapters/listening/client-address.js';
import { openFileLimit, shareDescriptors, type ListenerShare } from './adapters/listening/descriptor-budget.js';
import type { RunningServer } from './adapters/listening/guarded-server.js';
import { skuLookupPath } from './adapters/http/operations.js';
import { startHttpServer } from './adapters/http/server.js';
import { loadDotEnv, readConfig, type Config } from './adapters/config/config.js';
import { createLogger, type Logger } from './adapters/logging/logger.js';
import { startMetricsServer, type RunningMetricsServer } from './adapters/metrics/metrics-server.js';
import { PrometheusMetrics } from './adapters/metrics/prometheus-metrics.js';
import { alwaysReady } from './adapters/memory/always-ready.js';
import { DEMO_CATALOG_FILE, DEMO_PARTNER_ID } from './adapters/catalog-file/catalog-file.js';
import { CatalogFileReloader } from './adapters/catalog-file/catalog-file-reloader.js';
import { MemoryAuthFailureGuard } from './adapters/memory/memory-auth-failure-guard.js';
import { MemoryCatalogStore } from './adapters/memory/memory-catalog-store.js';
import { MemoryWebhookEndpoints } from './adapters/memory/memory-webhook-endpoints.js';
import { MemoryWebhookOutbox } from './adapters/memory/memory-webhook-outbox.js';
import { MemoryRateLimiter } from './adapters/memory/memory-rate-limiter.js';
import { processCursorKeys } from './adapters/memory/process-cursor-keys.js';
import { openMysqlStorage } from './adapters/mysql/mysql-storage.js';
import { RedisRateLimiter } from './adapters/redis/redis-rate-limiter.js';
import { RedisRequestRoundTrip } from './adapters/redis/request-round-trip.js';
import { ChangesElsewhere } from './application/instances/changes-elsewhere.js';
import type { ApiKeyStore } from './application/access/api-key-store.js';
import { systemClock } from './application/common/clock.js';
import type { RateLimiter } from './application/access/rate-limiter.js';
import { noMetrics } from './adapters/service-metrics.js';
import { TIMEOUTS } from './adapters/timeouts.js';
import { generateApiKey, hashApiKey } from './domain/api-key.js';
import { createContainer, nobodyToTell, TOKENS, type AdminInfrastructure, type Infrastructure, type WebhookInfrastructure } from './container.js';
import { createHttpHandler } from './adapters/http/handler.js';
import type { Container } from 'inversify';
import { createPortalApp } from './adapters/portal/portal-app.js';
import { invitationUrl } from './adapters/portal/portal-paths.js';
import { startPortalServer, type RunningPortal } from './adapters/portal/portal-server.js';
import { memoryAdminStore } from './adapters/memory/memory-admin-store.js';
import { MemoryApiKeyAdmin } from './adapters/memory/memory-api-key-admin.js';
import { RedisChangeVersions } from './adapters/redis/redis-change-versions.js';
import { KEY_USAGE_FLUSH_MS, KeyUsageRecorder } from './application/access/key-usage.js';
import { ADMIN_RECORDS_PRUNE_INTERVAL_MS } from './domain/admin.js';

/** The adapters a deployment opened, and how to close them on shutdown. */
interface Deployment {
  readonly infrastructure: Infrastructure;
  close(): Promise<void>;
  /** Printed once the server listens, with its real address. */
  banner?: (url: string) => string;
  /** Memory storage: reads its catalog file again (SIGHUP). */
  reloadCatalog?: (trigger: string) => Promise<void>;
  /** The partner portal's adapters, over the same storage. */
  readonly portal: Omit<AdminInfrastructure, 'usage' | 'clock'>;
  /** The demo: a partner whose admin is invited at start, the link printed with the demo key. */
  readonly demoPartner?: string;
  /** Partners' webhook endpoints and the outbox this instance delivers from. */
  readonly webhooks: { readonly endpoints: WebhookEndpointStore; readonly outbox: WebhookOutbox };
}

/** The demo partner's admin, invited at every start of the embedded demo. */
const DEMO_ADMIN_EMAIL = 'admin@demo.example';

async function main(): Promise<void> {
  loadDotEnv();
  const config = readConfig(process.env);
  const logger = createLogger(config.logLevel);
  const metrics = config.metricsPort === 0 ? undefined : new PrometheusMetrics();
  // Every instance notes when each key is used and writes it once a minute: never a write per request.
  const keyUsage = new KeyUsageRecorder(systemClock);
  const deployment = await openInfrastructure(config, logger, metrics, keyUsage);
  const container = createContainer({
    api: deployment.infrastructure,
    admin: { ...deployment.portal, usage: keyUsage, clock: systemClock },
    webhooks: {
      ...deployment.webhooks, allowPrivateTargets: config.webhookAllowPrivateTargets, delivery: webhookDelivery(config, deployment.webhooks.outbox, metrics),
    },
  });
  const { reloadCatalog } = deployment;
  if (reloadCatalog) process.on('SIGHUP', () => void reloadCatalog('SIGHUP'));
  const proxies = trustedProxies(config.trustedProxies);
  const servesApi = config.role !== 'portal';
  const budget = shareDescriptors(openFileLimit(), {
    ...(servesApi ? { apiMaxConnections: config.maxConnections } : {}),
    portal: config.portalPort !== 0,
    metrics: metrics !== undefined,
  });
  logger.info({ descriptors: budget }, 'descriptors shared among the listeners');
  const metricsServer = metrics === undefined ? undefined : await startMetrics(metrics, config, budget.metrics!, logger);
  const server = servesApi ? await startApi(container, config, budget.api!, proxies, logger) : undefined;
  const flushUsage = (): Promise<void> => keyUsage.flush(deployment.portal.keys).then(() => undefined, (error: unknown) => {
    logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'keys: last use not written; kept for the next minute');
  });
  const flushing = setInterval(() => void flushUsage(), KEY_USAGE_FLUSH_MS);
  flushing.unref();
  const portal = config.portalPort === 0 ? undefined : await startPortal(container, config, { share: budget.portal!, proxies }, logger, metrics);
  // Whoever runs the portal keeps its records within their retention (README, partner portal).
  const pruning = portal === undefined ? undefined : pruneAdminRecordsEvery(ADMIN_RECORDS_PRUNE_INTERVAL_MS, container, logger);
  // Every instance delivers, whatever its role: the outbox's claims keep two from making one attempt.
  const deliveries = startDeliveryLoop(container.get(TOKENS.DeliverWebhooks), logger, config.webhookPollMs);
  logger.info({ role: config.role, url: server?.url, metricsUrl: metricsServer?.url, portalUrl: portal?.url, storage: config.storage, rateLimitStore: config.rateLimitStore }, 'listening');
  if (deployment.banner && server !== undefined) process.stdout.write(deployment.banner(server.url));
  if (portal !== undefined && deployment.demoPartner !== undefined) process.stdout.write(await demoInvitation(container, deployment.demoPartner, config, portal.url));

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // A hung close must not keep the process alive past the grace period.
    setTimeout(() => process.exit(1), TIMEOUTS.shutdownGraceMs + TIMEOUTS.shutdownHangMarginMs).unref();
    // The figures stay readable while requests in flight finish.
    clearInterval(flushing);
    clearInterval(pruning);
    void Promise.all([server?.close(TIMEOUTS.shutdownGraceMs), portal?.close(TIMEOUTS.shutdownGraceMs)])
      .then(() => deliveries.stop(TIMEOUTS.shutdownGraceMs))
      .then(() => metricsServer?.close(TIMEOUTS.shutdownGraceMs))
      .then(flushUsage)
      .then(() => deployment.close())
      .then(() => {
        logger.info('stopped');
        process.exit(0);
      });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/**
 * How this instance's webhook attempts go out: over Node's HTTP client, to public addresses only
 * unless WEBHOOK_ALLOW_PRIVATE_TARGETS says otherwise, within the configured limits.
 */
function webhookDelivery(config: Config, outbox: WebhookOutbox, metrics: PrometheusMetrics | undefined): NonNullable<WebhookInfrastructure['delivery']> {
  const allowPrivate = config.webhookAllowPrivateTargets;
  const sender = new HttpWebhookSender({
    timeoutMs: config.webhookTimeoutMs,
    allowHttp: allowPrivate,
    allowsAddress: allowPrivate ? () => true : (address) => refusedAddress(address) === null,
  });
  const limits = {
    concurrency: config.webhookConcurrency, perEndpoint: WEBHOOK_ATTEMPTS_PER_ENDPOINT, perPartner: webhookAttemptsPerPartner(config.webhookConcurrency),
    attemptTimeoutMs: config.webhookTimeoutMs, retrySchedule: config.webhookRetrySchedule,
  };
  if (metrics !== undefined) metrics.watchWebhookOutbox(() => outbox.pendingCount());
  return metrics === undefined ? { sender, limits } : { sender, limits, metrics };
}

/** The partner API's listener, within its share of the descriptors. */
function startApi(container: Container, config: Config, share: ListenerShare, proxies: TrustedProxies, logger: Logger): Promise<RunningServer> {
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const publicBaseUrl = config.publicBaseUrl ?? `http://${host}:${config.port}`;
  const handler = createHttpHandler(container.get(TOKENS.HttpDependencies), { clientAddress: clientAddressResolver(proxies), publicBaseUrl });
  return startHttpServer(handler, {
    port: config.port,
    host: config.host,
    logger,
    limits: { maxConnections: share.connections, maxHeldRefusals: share.heldRefusals, maxConnectionsPerAddress: config.maxConnectionsPerAddress, trustedProxies: proxies },
  });
}

/** `/metrics` on its own listener; a port that cannot be had stops the start, naming the variables. */
async function startMetrics(metrics: PrometheusMetrics, config: Config, share: ListenerShare, logger: Logger): Promise<RunningMetricsServer> {
  try {
    return await startMetricsServer(metrics, { port: config.metricsPort, host: config.metricsHost, share, logger });
  } catch (error) {
    throw new Error(`METRICS_PORT, METRICS_HOST: cannot listen on ${config.metricsHost}:${config.metricsPort}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The partner portal on its own listener; a port that cannot be had stops the start, naming the variables. */
async function startPortal(
  container: Container, config: Config, listener: { share: ListenerShare; proxies: TrustedProxies }, logger: Logger, metrics: PrometheusMetrics | undefined,
): Promise<RunningPortal> {
  const app = createPortalApp(container.get(TOKENS.PortalUseCases), {
    logger, secureCookies: config.portalSecureCookies, clientAddress: clientAddressResolver(listener.proxies), ...(metrics === undefined ? {} : { metrics }),
  });
  try {
    return await startPortalServer(app, {
      port: config.portalPort, host: config.portalHost, share: listener.share, trustedProxies: listener.proxies, publicUrl: config.portalPublicUrl, logger,
    });
  } catch (error) {
    throw new Error(`PORTAL_PORT, PORTAL_HOST: cannot listen on ${config.portalHost}:${config.portalPort}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Prunes failed sign-ins, ended locks and old audit events now and every `intervalMs`; a failure is logged and tried again next time. */
function pruneAdminRecordsEvery(intervalMs: number, container: Container, logger: Logger): NodeJS.Timeout {
  const prune = container.get(TOKENS.PruneAdminRecords);
  const run = (): void => void prune.execute().catch((error: unknown) => {
    logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'portal: old sign-in failures and audit events not pruned; tried again later');
  });
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return timer;
}

/** The demo's admin invitation, printed beside its key, so a new user opens the portal at once. */
async function demoInvitation(container: Container, partnerId: string, config: Config, portalUrl: string): Promise<string> {
  const invitation = await container.get(TOKENS.InviteAdmin).execute({ partnerId, email: DEMO_ADMIN_EMAIL });
  return [
    'Partner portal: create the demo partner\'s admin account here (the link works once, until the process stops),',
    'then make, replace and revoke keys under Settings, API keys:',
    `  ${invitationUrl(config.portalPublicUrl ?? portalUrl, invitation.token)}`,
    '',
    '',
  ].join('\n');
}

async function openInfrastructure(config: Config, logger: Logger, metrics: PrometheusMetrics | undefined, keyUsage: KeyUsageRecorder): Promise<Deployment> {
  // MySQL with Redis and a response cache: keys and answers held in memory, kept current by the
  // version tokens read with every count. Without Redis, or with CACHE_TTL_MS=0, every request
  // reads its key from the database.
  const rateLimiting = await openRateLimiter(config, logger, config.storage === 'mysql' && config.cacheTtlMs > 0);
  if (rateLimiting.usingFallback !== undefined) metrics?.watchRedisFallback(rateLimiting.usingFallback);
  if (rateLimiting.slowCounts !== undefined) metrics?.watchRedisSlowCounts(rateLimiting.slowCounts);
  const serviceMetrics = metrics ?? noMetrics;
  const authFailures = new MemoryAuthFailureGuard({ failuresPerWindow: config.authFailuresPerMinute, clock: systemClock, maxEntries: config.rateLimitMaxKeys });
  if (config.storage === 'mysql' && config.databaseUrl !== null) {
    const storage = await openMysqlStorage({ url: config.databaseUrl, logger, cursorSecret: config.cursorSecret });
    // The first start of a deployment makes its cursor key; a database down now makes it on the first page instead.
    await storage.cursorKeys.cursorKey().catch((error: unknown) => {
      logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'changes feed: cursor key not read at start; the first page will read it');
    });
    metrics?.watchDatabasePool(storage.poolUse);
    // Keys issued and revoked in the portal are announced like the CLI's, so every instance sees them on its next request.
    const announcer = config.redisUrl === null ? undefined : new RedisChangeVersions({ url: config.redisUrl });
    const changes = rateLimiting.changes;
    let keys: ApiKeyStore = storage.keys;
    if (changes !== undefined) {
      const held = new KeySetCache(storage.keys, { ...changes, clock: systemClock, maxAgeMs: config.cacheTtlMs });
      // The token first, then the keys, so the first request finds both current.
      await changes.versions.keysVersion();
      await held.warm().catch((error: unknown) => {
        logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'keys: not read at start; the first request will read them');
      });
      keys = held;
    }
    const catalog = withResponseCache(storage.catalog, {
      ttlMs: config.cacheTtlMs,
      maxEntries: config.cacheMaxEntries,
      maxBytes: config.cacheMaxBytes,
      watch: changes?.watch,
      metrics: serviceMetrics,
    });
    if (catalog instanceof CachedProductCatalog) metrics?.watchResponseCache(catalog);
    return {
      infrastructure: {
        catalog,
        changes: storage.changes,
        cursorKeys: storage.cursorKeys,
        keys,
        limiter: rateLimiting.limiter,
        authFailures,
        readiness: storage.readiness,
        logger,
        metrics: serviceMetrics,
        keyUsage,
      },
      portal: { keys: storage.keyAdmin, ...storage.admins, announcer: announcer ?? nobodyToTell },
      webhooks: storage.webhooks,
      close: async () => {
        await rateLimiting.close();
        await announcer?.close();
        await storage.close();
      },
    };
  }
  // This process's endpoints and outbox: a reload of the file queues its webhook messages there.
  const webhookEndpoints: MemoryWebhookEndpoints = new MemoryWebhookEndpoints({ hasPartner: (partnerId: string): boolean => store.hasPartner(partnerId) });
  const outbox = new MemoryWebhookOutbox(webhookEndpoints);
  const store: MemoryCatalogStore = new MemoryCatalogStore(outbox);
  const cursorKeys = processCursorKeys({ secret: config.cursorSecret });
  const reloader = new CatalogFileReloader(config.catalogFile ?? DEMO_CATALOG_FILE, createContainer({ catalog: { store, cursorKeys } }).get(TOKENS.ImportCatalog), logger);
  await reloader.load();
  const deployment: Deployment = {
    infrastructure: { catalog: store, changes: store, cursorKeys, keys: store, limiter: rateLimiting.limiter, authFailures, readiness: alwaysReady, logger, metrics: serviceMetrics, keyUsage },
    // One process: a key issued or revoked in the store is in force for its next request, with no one else to tell.
    portal: { keys: new MemoryApiKeyAdmin(store), ...memoryAdminStore(), announcer: nobodyToTell },
    webhooks: { endpoints: webhookEndpoints, outbox },
    close: () => {
      reloader.close();
      return rateLimiting.close();
    },
    reloadCatalog: (trigger) => reloader.reload(trigger),
  };
  if (config.catalogFile !== null) {
    reloader.watch();
    return deployment;
  }
  const demoKey = generateApiKey();
  store.addKey({ keyId: 'demo-key', partnerId: DEMO_PARTNER_ID, sha256: hashApiKey(demoKey) });
  return { ...deployment, banner: (url) => demoBanner(url, demoKey), demoPartner: DEMO_PARTNER_ID };
}

interface RateLimiting {
  readonly limiter: RateLimiter;
  /** When counting is shared through Redis and changes were asked for: what the counts reveal. */
  readonly changes?: { readonly watch: ChangesElsewhere; readonly versions: KeySetVersionReader };
  /** When counting is shared through Redis: whether this instance counts on its share now, Redis lost. */
  readonly usingFallback?: () => boolean;
  /** When counting is shared through Redis: how many counts were given up as slow. */
  readonly slowCounts?: () => number;
  close(): Promise<void>;
}

/** In-process, or shared through Redis with each instance counting on its share while Redis is away. */
async function openRateLimiter(config: Config, logger: Logger, watchChanges: boolean): Promise<RateLimiting> {
  if (config.rateLimitStore === 'memory' || config.redisUrl === null) {
    return { limiter: new MemoryRateLimiter({ limit: config.rateLimitPerMinute, clock: systemClock, maxKeys: config.rateLimitMaxKeys }), close: () => Promise.resolve() };
  }
  const watch = watchChanges ? new ChangesElsewhere() : undefined;
  // Each request's one call to Redis: the limiter takes its count, the watch the version tokens.
  const roundTrip = new RedisRequestRoundTrip({ url: config.redisUrl, logger, watch });
  const limiter = new RedisRateLimiter(roundTrip, { limit: config.rateLimitPerMinute, maxKeys: config.rateLimitMaxKeys });
  // Redis down at start is no reason to refuse partners: the breaker counts in-process until it returns,
  // and warns once on the first request it cannot count in Redis.
  await roundTrip.ready(TIMEOUTS.redisStartWaitMs).catch((error: unknown) => {
    logger.info({ reason: error instanceof Error ? error.message : String(error) }, 'rate limiter: Redis not reachable at start');
  });
  const close = (): Promise<void> => roundTrip.close();
  const usingFallback = (): boolean => roundTrip.usingFallback();
  const slowCounts = (): number => roundTrip.slowCounts();
  return watch === undefined ? { limiter, usingFallback, slowCounts, close } : { limiter, changes: { watch, versions: roundTrip }, usingFallback, slowCounts, close };
}

/** The one place a key is ever printed by the server: the demo's, to its own terminal. */
function demoBanner(url: string, key: string): string {
  return [
    '',
    'Demo catalog loaded. This key for the demo partner is shown once and lives until the process stops:',
    `  ${key}`,
    'Try it:',
    `  curl -s -H 'Authorization: Bearer ${key}' ${url}${skuLookupPath('TENT-2P')}`,
    '',
    '',
  ].join('\n');
}

main().catch((error: unknown) => {
  // One clear reason, no stack: a bad variable, an unreadable or invalid catalog.
  process.stderr.write(`partner-catalog-api: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
