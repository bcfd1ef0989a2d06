import { readFileSync } from 'node:fs';
import type { Container } from 'inversify';
import type { Logger } from 'pino';
import { CachedProductCatalog, withResponseCache } from '../adapters/cache/cached-product-catalog.js';
import { KeySetCache, type KeySetVersionReader } from '../adapters/cache/key-set-cache.js';
import { DEMO_CATALOG_FILE, DEMO_PARTNER_ID } from '../adapters/catalog-file/catalog-file.js';
import { CatalogFileReloader } from '../adapters/catalog-file/catalog-file-reloader.js';
import type { Config, RateLimitSettings, WebhookSettings } from '../adapters/config/config.js';
import type { RedisSettings } from '../adapters/config/redis-config.js';
import type { StorageSettings } from '../adapters/config/storage-config.js';
import { alwaysReady } from '../adapters/memory/always-ready.js';
import { memoryAdminStore } from '../adapters/memory/memory-admin-store.js';
import { MemoryApiKeyAdmin } from '../adapters/memory/memory-api-key-admin.js';
import { MemoryAuthFailureGuard } from '../adapters/memory/memory-auth-failure-guard.js';
import { MemoryCatalogStore } from '../adapters/memory/memory-catalog-store.js';
import { MemoryRateLimiter } from '../adapters/memory/memory-rate-limiter.js';
import { MemoryWebhookEndpoints } from '../adapters/memory/memory-webhook-endpoints.js';
import { MemoryWebhookOutbox } from '../adapters/memory/memory-webhook-outbox.js';
import { processCursorKeys } from '../adapters/memory/process-cursor-keys.js';
import { startTracing } from '../adapters/tracing/start-tracing.js';
import { PrometheusMetrics } from '../adapters/metrics/prometheus-metrics.js';
import type { MysqlTls } from '../adapters/mysql/mysql-database.js';
import { openMysqlStorage } from '../adapters/mysql/mysql-storage.js';
import { ReadPositions } from '../adapters/mysql/replica-reads.js';
import { RedisChangeVersions } from '../adapters/redis/redis-change-versions.js';
import { RedisRefusedError } from '../adapters/redis/redis-client.js';
import type { RedisTarget } from '../adapters/redis/redis-target.js';
import { RedisRateLimiter } from '../adapters/redis/redis-rate-limiter.js';
import { RedisRequestRoundTrip } from '../adapters/redis/request-round-trip.js';
import { noMetrics } from '../adapters/service-metrics.js';
import { TIMEOUTS } from '../adapters/timeouts.js';
import { HttpWebhookSender } from '../adapters/webhooks/http-webhook-sender.js';
import type { ApiKeyStore } from '../application/access/api-key-store.js';
import { StoppingReadiness, type ReadinessProbe } from '../application/common/readiness-probe.js';
import { CountOverlap } from '../application/access/count-overlap.js';
import { KeyUsageRecorder } from '../application/access/key-usage.js';
import type { RateLimiter } from '../application/access/rate-limiter.js';
import { systemClock } from '../application/common/clock.js';
import { ChangesElsewhere } from '../application/instances/changes-elsewhere.js';
import { WEBHOOK_ATTEMPTS_PER_ENDPOINT, webhookAttemptsPerPartner } from '../application/webhooks/deliver-webhooks.js';
import type { WebhookOutbox } from '../application/webhooks/webhook-outbox.js';
import { generateApiKey, hashApiKey } from '../domain/api-key.js';
import { reasonOf } from '../domain/failure-reason.js';
import { refusedAddress } from '../domain/webhook-url.js';
import { createContainer, nobodyToTell, TOKENS, type AdminInfrastructure, type Infrastructure, type WebhookInfrastructure } from './container.js';

/**
 * What a process of the service runs on: the adapters its configuration chose, joined to their
 * ports in one container. The service, the portal's own process and the tests all open one here.
 */
export interface Deployment {
  readonly config: Config;
  readonly container: Container;
  /** The partner API's adapters, as bound in the container. */
  readonly api: Infrastructure;
  /** The partner portal's and the operator's adapters over the same storage. */
  readonly admin: AdminInfrastructure;
  /** Every instance notes when each key is used and writes it once a minute: never a write per request. */
  readonly keyUsage: KeyUsageRecorder;
  /** None with METRICS_PORT=0. */
  readonly metrics?: PrometheusMetrics;
  /** The embedded demo: the live and test keys made at start, shown once, and the partner whose admin is invited. */
  readonly demo?: { readonly key: string; readonly testKey: string; readonly partnerId: string };
  /** Memory storage: reads its catalog file again (SIGHUP). */
  readonly reloadCatalog?: (trigger: string) => Promise<void>;
  /** From now on `/readyz` answers 503, while every listener goes on serving: the start of a stop. */
  notReady(): void;
  close(): Promise<void>;
}

/** The storage's own adapters, before the API's guards and the container join them. */
interface Storage {
  readonly api: Omit<Infrastructure, 'limiter' | 'authFailures' | 'logger' | 'metrics' | 'keyUsage'>;
  readonly admin: Omit<AdminInfrastructure, 'usage' | 'clock'>;
  readonly webhooks: Omit<WebhookInfrastructure, 'allowPrivateTargets' | 'delivery'>;
  readonly demo?: Deployment['demo'];
  readonly reloadCatalog?: (trigger: string) => Promise<void>;
  close(): Promise<void>;
}

/** Opens the storage, the rate limiter and the caches the configuration names, and binds them. */
export async function openDeployment(config: Config, logger: Logger): Promise<Deployment> {
  const metrics = config.listeners.metrics.port === 0 ? undefined : new PrometheusMetrics();
  // Tracing first, so that whatever opens next can draw its spans; last to stop.
  const traces = config.tracing === null ? undefined : await startTracing(config.tracing, metrics?.spanCounts);
  const keyUsage = new KeyUsageRecorder(systemClock);
  // MySQL with Redis and a response cache: keys and answers held in memory, kept current by the
  // version tokens read with every count. Without Redis, or with CACHE_TTL_MS=0, every request
  // reads its key from the database; answers held are served after a read of their catalog's version.
  // Its CA file read once, for the request path's connections and the announcer alike.
  const redis = redisTarget(config.redis);
  // With replicas, the changes seen tell what each replica read must have applied.
  const positions = config.storage.replicas.urls.length > 0 ? new ReadPositions() : undefined;
  const rateLimiting = await openRateLimiter(config.rateLimits, logger, config.storage.kind === 'mysql' && config.cache.ttlMs > 0, redis, positions);
  if (rateLimiting.usingFallback !== undefined) metrics?.watchRedisFallback(rateLimiting.usingFallback);
  if (rateLimiting.slowCounts !== undefined) metrics?.watchRedisSlowCounts(rateLimiting.slowCounts);
  const serviceMetrics = metrics ?? noMetrics;
  const storage = config.storage.kind === 'mysql' ? await openMysql(config, logger, rateLimiting, metrics, redis, positions) : await openMemory(config.storage, logger);
  const readiness = new StoppingReadiness(storage.api.readiness);
  const api: Infrastructure = {
    ...storage.api,
    readiness,
    limiter: rateLimiting.limiter,
    authFailures: new MemoryAuthFailureGuard({ failuresPerWindow: config.rateLimits.authFailuresPerMinute, clock: systemClock, maxEntries: config.rateLimits.maxKeys }),
    logger,
    metrics: serviceMetrics,
    keyUsage,
    // Where changes are watched, a lookup's read need not wait for its count (count-overlap.ts).
    ...(rateLimiting.changes === undefined ? {} : { overlap: new CountOverlap(rateLimiting.limiter, rateLimiting.changes.watch) }),
  };
  if (api.catalog instanceof CachedProductCatalog) metrics?.watchResponseCache(api.catalog);
  const admin: AdminInfrastructure = { ...storage.admin, usage: keyUsage, clock: systemClock };
  const webhooks: WebhookInfrastructure = {
    ...storage.webhooks, allowPrivateTargets: config.webhooks.allowPrivateTargets, delivery: webhookDelivery(config.webhooks, storage.webhooks.outbox, metrics),
  };
  return {
    config,
    container: createContainer({ api, admin, webhooks }),
    api,
    admin,
    keyUsage,
    ...(metrics === undefined ? {} : { metrics }),
    ...(storage.demo === undefined ? {} : { demo: storage.demo }),
    ...(storage.reloadCatalog === undefined ? {} : { reloadCatalog: storage.reloadCatalog }),
    notReady: () => readiness.stop(),
    close: async () => {
      await rateLimiting.close();
      await storage.close();
      await traces?.stop(TIMEOUTS.traceFlushMs);
    },
  };
}

async function openMysql(
  config: Config, logger: Logger, rateLimiting: RateLimiting, metrics: PrometheusMetrics | undefined, redis: RedisTarget | null, positions: ReadPositions | undefined,
): Promise<Storage> {
  const { databaseUrl, cursorSecret, poolSize, tls, replicas } = config.storage;
  if (databaseUrl === null) throw new Error('DATABASE_URL: is required with STORAGE=mysql (mysql://user:pass@host:port/db)');
  const { changes } = rateLimiting;
  const storage = await openMysqlStorage({
    url: databaseUrl, logger, cursorSecret, connectionLimit: poolSize, tls: databaseTls(tls),
    ...(positions === undefined || changes === undefined
      ? {}
      : { replicas: { ...replicas, positions, isShared: () => changes.watch.isShared() } }),
  });
  if (storage.replicas !== undefined) metrics?.watchReplicas(storage.replicas);
  // The first start of a deployment makes its cursor key; a database down now makes it on the first page instead.
  await Promise.resolve(storage.cursorKeys.cursorKey()).catch((error: unknown) => {
    logger.warn({ reason: reasonOf(error) }, 'changes feed: cursor key not read at start; the first page will read it');
  });
  metrics?.watchDatabasePool(storage.poolUse);
  // Keys issued and revoked in the portal are announced like the CLI's, so every instance sees them on its next request.
  const announcer = redis === null ? undefined : new RedisChangeVersions({ target: redis, position: storage.position });
  let keys: ApiKeyStore = storage.keys;
  let readiness = storage.readiness;
  let held: KeySetCache | undefined;
  // The portal's own process answers no API request: it holds no keys.
  if (changes !== undefined && config.listeners.role !== 'portal') {
    held = new KeySetCache(storage.keys, { ...changes, clock: systemClock, maxAgeMs: config.cache.ttlMs });
    // The token first, then the keys, so the first request finds both current.
    await changes.versions.keysVersion();
    await loadKeySet(held, logger);
    keys = held;
    readiness = keySetReadiness(held, storage.readiness);
  }
  const catalog = withResponseCache(storage.catalog, {
    ttlMs: config.cache.ttlMs, maxEntries: config.cache.maxEntries, maxBytes: config.cache.maxBytes, watch: changes?.watch, metrics: metrics ?? noMetrics,
    // Whenever Redis cannot tell of a change (not configured, lost, switching): the versions the imports write.
    versions: storage.catalogVersions,
  });
  return {
    api: { catalog, changes: storage.changes, cursorKeys: storage.cursorKeys, keys, readiness },
    admin: { keys: storage.keyAdmin, ...storage.admins, announcer: announcer ?? nobodyToTell },
    webhooks: storage.webhooks,
    close: async () => {
      held?.close();
      await announcer?.close();
      await storage.close();
    },
  };
}

/**
 * Starts reading the whole key set, and waits for it a while: a small set is held before the first
 * request, a large one goes on loading while the instance listens, not ready, each request reading
 * its key from the database meanwhile. A read that fails is tried again until it succeeds.
 */
async function loadKeySet(held: KeySetCache, logger: Logger): Promise<void> {
  const startedAt = performance.now();
  let failures = 0;
  const loaded = held.load((error) => {
    // Told once, then once more when it is held: not a line a second while the database is away.
    if (failures++ === 0) logger.warn({ reason: reasonOf(error) }, 'keys: not read; tried again every second, not ready until they are');
  }).then(() => {
    if (held.isLoaded()) logger.info({ keys: held.size(), ms: Math.round(performance.now() - startedAt) }, 'keys: held; ready');
  });
  let waited: NodeJS.Timeout | undefined;
  await Promise.race([loaded, new Promise((resolve) => (waited = setTimeout(resolve, TIMEOUTS.keySetStartWaitMs)))]);
  clearTimeout(waited);
}

/** Ready only while the key set is held and the storage answers (docs/operations.md, probes). */
function keySetReadiness(held: KeySetCache, storage: ReadinessProbe): ReadinessProbe {
  return { isReady: async () => held.isLoaded() && (await storage.isReady()) };
}

/** Memory storage: the catalog file's content in this process, or the embedded demo with a key made now. */
async function openMemory(settings: StorageSettings, logger: Logger): Promise<Storage> {
  // This process's endpoints and outbox: a reload of the file queues its webhook messages there.
  const endpoints: MemoryWebhookEndpoints = new MemoryWebhookEndpoints({ hasPartner: (partnerId: string): boolean => store.hasPartner(partnerId) });
  const outbox = new MemoryWebhookOutbox(endpoints);
  const store: MemoryCatalogStore = new MemoryCatalogStore(outbox);
  const cursorKeys = processCursorKeys({ secret: settings.cursorSecret });
  const importer = createContainer({ catalog: { store, cursorKeys } });
  const reloader = new CatalogFileReloader(settings.catalogFile ?? DEMO_CATALOG_FILE, importer.get(TOKENS.ImportCatalog), logger);
  await reloader.load();
  const storage: Storage = {
    api: { catalog: store, changes: store, cursorKeys, keys: store, readiness: alwaysReady },
    // One process: a key issued or revoked in the store is in force for its next request, with no one else to tell.
    admin: { keys: new MemoryApiKeyAdmin(store), ...memoryAdminStore(), announcer: nobodyToTell },
    webhooks: { endpoints, outbox },
    reloadCatalog: (trigger) => reloader.reload(trigger),
    close: () => {
      reloader.close();
      return Promise.resolve();
    },
  };
  if (settings.catalogFile !== null) {
    reloader.watch();
    return storage;
  }
  const key = generateApiKey('live');
  const testKey = generateApiKey('test');
  store.addKey({ keyId: 'demo-key', partnerId: DEMO_PARTNER_ID, mode: 'live', sha256: hashApiKey(key) });
  store.addKey({ keyId: 'demo-test-key', partnerId: DEMO_PARTNER_ID, mode: 'test', sha256: hashApiKey(testKey) });
  return { ...storage, demo: { key, testKey, partnerId: DEMO_PARTNER_ID } };
}

/**
 * How this instance's webhook attempts go out: over Node's HTTP client, to public addresses only
 * unless WEBHOOK_ALLOW_PRIVATE_TARGETS says otherwise, within the configured limits.
 */
function webhookDelivery(settings: WebhookSettings, outbox: WebhookOutbox, metrics: PrometheusMetrics | undefined): NonNullable<WebhookInfrastructure['delivery']> {
  const allowPrivate = settings.allowPrivateTargets;
  const sender = new HttpWebhookSender({
    timeoutMs: settings.timeoutMs,
    allowHttp: allowPrivate,
    allowsAddress: allowPrivate ? () => true : (address) => refusedAddress(address) === null,
  });
  const limits = {
    concurrency: settings.concurrency, perEndpoint: WEBHOOK_ATTEMPTS_PER_ENDPOINT, perPartner: webhookAttemptsPerPartner(settings.concurrency),
    attemptTimeoutMs: settings.timeoutMs, retrySchedule: settings.retrySchedule,
  };
  if (metrics !== undefined) metrics.watchWebhookOutbox(() => outbox.pendingCount());
  return metrics === undefined ? { sender, limits } : { sender, limits, metrics };
}

/** Where Redis is, REDIS_TLS_CA_FILE's certificate authorities read now (the system's without it); null without Redis. */
export function redisTarget(redis: RedisSettings | null): RedisTarget | null {
  if (redis === null) return null;
  const tlsCa = redis.tlsCaFile === null ? undefined : caFile('REDIS_TLS_CA_FILE', redis.tlsCaFile);
  if (redis.kind === 'single') return { kind: 'single', url: redis.url, tlsCa };
  const login = { username: redis.username, password: redis.password, tls: redis.tls, tlsCa };
  if (redis.kind === 'cluster') return { ...login, kind: 'cluster', nodes: redis.nodes };
  return { ...login, kind: 'sentinel', sentinels: redis.sentinels, name: redis.name, sentinelPassword: redis.sentinelPassword };
}

/**
 * TLS to the database with DATABASE_TLS=true, DATABASE_TLS_CA_FILE's certificate authorities read now
 * (the system's without it), once for every connection the pool opens; undefined without TLS.
 */
export function databaseTls(settings: StorageSettings['tls']): MysqlTls | undefined {
  const { enabled, caFile: file } = settings;
  if (!enabled) return undefined;
  return file === null ? {} : { ca: caFile('DATABASE_TLS_CA_FILE', file) };
}

/** The PEM file a setting names; one that cannot be read stops the start or the command, naming the setting. */
function caFile(setting: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Error(`${setting}: cannot read ${path} (${reasonOf(error)}): name a PEM file of the certificate authorities to trust`);
  }
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
async function openRateLimiter(
  settings: RateLimitSettings, logger: Logger, watchChanges: boolean, redis: RedisTarget | null, positions: ReadPositions | undefined,
): Promise<RateLimiting> {
  if (settings.store === 'memory' || redis === null) {
    return { limiter: new MemoryRateLimiter({ limit: settings.perMinute, clock: systemClock, maxKeys: settings.maxKeys }), close: () => Promise.resolve() };
  }
  const watch = watchChanges ? new ChangesElsewhere(positions) : undefined;
  // The requests' one call to Redis, one a loop turn: the limiter takes its count, the watch the version tokens.
  const roundTrip = new RedisRequestRoundTrip({ target: redis, logger, watch });
  const limiter = new RedisRateLimiter(roundTrip, { limit: settings.perMinute, maxKeys: settings.maxKeys });
  // Redis down at start is no reason to refuse partners: the breaker counts in-process until it returns,
  // and warns once on the first request it cannot count in Redis. Redis refusing the settings' user is:
  // that does not come right by itself, and an instance on it would count on its share for good while
  // looking alive. The start stops, as it does for a database that refuses its user.
  await roundTrip.ready(TIMEOUTS.redisStartWaitMs).catch(async (error: unknown) => {
    if (error instanceof RedisRefusedError) {
      await roundTrip.close();
      throw error;
    }
    logger.warn({ reason: reasonOf(error) }, 'rate limiter: Redis not reachable at start; each instance counts on its own share until it is');
  });
  const close = (): Promise<void> => roundTrip.close();
  const usingFallback = (): boolean => roundTrip.usingFallback();
  const slowCounts = (): number => roundTrip.slowCounts();
  return watch === undefined ? { limiter, usingFallback, slowCounts, close } : { limiter, changes: { watch, versions: roundTrip.keySetVersions }, usingFallback, slowCounts, close };
}
