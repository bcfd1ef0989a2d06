import { createRequire } from 'node:module';
import { Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import type { AttemptOutcomeLabel, DeliveryMetrics } from '../../application/webhooks/deliver-webhooks.js';
import type { KeyMode } from '../../domain/api-key.js';
import { UNMATCHED_ROUTE, type AuthFailureCode, type RateLimitKind, type ServiceMetrics } from '../service-metrics.js';
import { RouteDurationHistogram, RouteFigures } from './request-figures.js';

/** Every figure of the service's own is named under this prefix; the process's figures keep their usual names. */
export const METRIC_PREFIX = 'pcat_';

/**
 * Most route templates recorded; any further one is counted as unmatched. Callers pass templates,
 * of which there are a few dozen: this only keeps a caller's mistake from growing the exposition.
 */
export const MAX_ROUTES = 200;

/** What the database pool is doing now (the MySQL storage reports it). */
export interface DatabasePoolUse {
  /** Connections lent to a statement, or being opened for one. */
  readonly inUse: number;
  /** Open connections waiting to be lent. */
  readonly idle: number;
  /** Callers waiting for a connection. */
  readonly waiting: number;
  /** Seconds callers have spent waiting for a connection, all together, since the pool was made. */
  readonly waitedSeconds: number;
}

/** What the read replicas are doing now (the MySQL storage reports it). */
export interface ReplicaReads {
  readonly replicas: ReadonlyArray<{ readonly name: string; lagSeconds(): number; poolUse(): DatabasePoolUse }>;
  /** Reads a replica could have taken that went to the primary, since the start, by why. */
  readonly primaryReads: Readonly<Record<string, number>>;
}

/** How full the response cache is now, read at scrape time. */
export interface ResponseCacheSize {
  /** Answers held, remembered misses included. */
  readonly entries: number;
  /** Bytes they are counted for. */
  readonly bytes: number;
}

/**
 * The service's figures in a prom-client registry of this instance's own (several servers in one
 * process keep theirs apart), with the process's default figures. Requests, refusals and cache
 * lookups are counted as plain numbers when they happen and handed to prom-client when scraped;
 * the Redis fallback and the pool are read when scraped.
 */
const requireCommonJs = createRequire(import.meta.url);

/**
 * prom-client's gauges of the live handles, requests and resources, all together: a gauge named like
 * a counter, which `promtool check metrics` reports ("non-counter metrics should not have "_total"
 * suffix"). Each is the sum of the gauge of the same name without `_total`, by `type`, which stays:
 * `sum(nodejs_active_handles)` reads the same number.
 */
export const LEFT_OUT_PROCESS_METRICS: readonly string[] = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * prom-client's default process figures (CPU, memory, heap, event-loop lag, handles, file
 * descriptors, version) but its GC-duration histogram: that one's PerformanceObserver runs on
 * every collection, and cost 5 to 7 % of lookup throughput in `npm run bench`. prom-client 15
 * registers each default figure by a module of its own and offers no way to leave one out; the
 * totals of LEFT_OUT_PROCESS_METRICS come in one module with the gauges by type, so they are
 * taken out of the registry once registered.
 */
function collectProcessMetrics(registry: Registry): void {
  const { metricsList } = requireCommonJs('prom-client/lib/defaultMetrics.js') as { metricsList: string[] };
  for (const name of metricsList.filter((metric) => metric !== 'gc')) {
    const register = requireCommonJs(`prom-client/lib/metrics/${name}.js`) as (registry: Registry, config: object) => void;
    register(registry, { eventLoopMonitoringPrecision: 10 });
  }
  for (const name of LEFT_OUT_PROCESS_METRICS) registry.removeSingleMetric(name);
}

export class PrometheusMetrics implements ServiceMetrics, DeliveryMetrics {
  readonly registry = new Registry();
  private readonly routes = new Map<string, RouteFigures>();
  private readonly rateLimitRejections: Record<RateLimitKind, number> = { key: 0, auth_failures: 0 };
  private readonly authFailures: Record<AuthFailureCode, number> = { missing_api_key: 0, invalid_api_key: 0 };
  private readonly cacheLookups = { hit: 0, miss: 0 };
  private readonly webhookAttempts = new Counter({
    name: `${METRIC_PREFIX}webhook_attempts_total`,
    help: 'Webhook attempts made by this instance, by outcome: delivered, endpoint_gone (410, the endpoint disabled), http_error (another status), or why no answer came (timeout, refused_address, name_not_resolved, connection_failed, invalid_url, endpoint_disabled).',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  /** Spans ended while tracing is on that found the export queue full (decisions: traces). */
  private readonly spansDropped = new Counter({
    name: `${METRIC_PREFIX}trace_spans_dropped_total`,
    help: 'Spans this instance ended while tracing was on and dropped unexported: the export queue (OTEL_BSP_MAX_QUEUE_SIZE) was full, the collector being slow or away, or the stop came first.',
    registers: [this.registry],
  });
  private readonly spansExported = new Counter({
    name: `${METRIC_PREFIX}trace_spans_exported_total`,
    help: 'Spans handed to the OTLP exporter, by how their export ended: ok, failed (refused or unreachable), timeout (OTEL_BSP_EXPORT_TIMEOUT).',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  /** Calls of deprecated operations; only they, and only by partner, so the series stay few. */
  private readonly deprecatedCalls = new Counter({
    name: `${METRIC_PREFIX}deprecated_operation_calls_total`,
    help: 'Calls of operations marked deprecated (docs/versioning.md), by operation and by the partner whose key the call carried ("none" when it carried no key that was taken): whom to tell before the operation goes.',
    labelNames: ['operation', 'partner'],
    registers: [this.registry],
  });
  private readonly webhookDurations = new Histogram({
    name: `${METRIC_PREFIX}webhook_attempt_duration_seconds`,
    help: 'Seconds a webhook attempt took, from resolving the endpoint\'s name to its answer (or the timeout).',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60],
    registers: [this.registry],
  });

  constructor() {
    collectProcessMetrics(this.registry);
    const routes = this.routes;
    new Counter({
      name: `${METRIC_PREFIX}http_requests_total`,
      help: 'Requests answered, by route template, status, and the mode of the key that made them ("test" for a test key, else "live").',
      labelNames: ['route', 'status', 'mode'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [route, figures] of routes) {
          for (const [status, count] of figures.statuses) this.inc({ route, status: String(status), mode: 'live' }, count);
          for (const [status, count] of figures.testStatuses) this.inc({ route, status: String(status), mode: 'test' }, count);
        }
      },
    });
    // prom-client types a registry's metrics as its own four classes; it formats any object with get().
    this.registry.registerMetric(new RouteDurationHistogram(
      `${METRIC_PREFIX}http_request_duration_seconds`,
      'Seconds from a request\'s arrival to its answer, by route template.',
      routes,
    ) as unknown as Metric);
    countedFrom(this.registry, `${METRIC_PREFIX}rate_limit_rejections_total`,
      'Requests refused with 429: limit "key" is the key\'s window (RATE_LIMIT_PER_MINUTE), "auth_failures" its address\'s failed authentications (AUTH_FAILURES_PER_MINUTE).',
      'limit', this.rateLimitRejections);
    countedFrom(this.registry, `${METRIC_PREFIX}auth_failures_total`,
      'Requests refused with 401, by error code.', 'code', this.authFailures);
    countedFrom(this.registry, `${METRIC_PREFIX}response_cache_lookups_total`,
      'Lookups through the response cache (MySQL storage), by result: answered from memory (hit) or read from the database (miss).',
      'result', this.cacheLookups);
  }

  observeRequest(route: string, status: number, seconds: number, mode: KeyMode = 'live'): void {
    let figures = this.routes.get(route);
    if (figures === undefined) figures = this.addRoute(route);
    figures.observe(status, seconds, mode);
  }

  deprecatedOperationCalled(operationId: string, partnerId: string | undefined): void {
    this.deprecatedCalls.inc({ operation: operationId, partner: partnerId ?? 'none' });
  }

  /** What the traces' export queue tells (SpanQueueCounts). */
  readonly spanCounts = {
    dropped: (spans: number): void => this.spansDropped.inc(spans),
    exported: (spans: number, outcome: 'ok' | 'failed' | 'timeout'): void => this.spansExported.inc({ outcome }, spans),
  };

  rateLimitRejected(kind: RateLimitKind): void {
    this.rateLimitRejections[kind] += 1;
  }

  authenticationFailed(code: AuthFailureCode): void {
    this.authFailures[code] += 1;
  }

  responseCacheLookup(hit: boolean): void {
    if (hit) this.cacheLookups.hit += 1;
    else this.cacheLookups.miss += 1;
  }

  /** 1 while the shared rate limiter counts in-process because Redis is away, else 0. */
  watchRedisFallback(onFallback: () => boolean): void {
    new Gauge({
      name: `${METRIC_PREFIX}rate_limiter_redis_fallback`,
      help: '1 while rate limits are counted in this process because Redis cannot be reached, 0 while they are counted in Redis.',
      registers: [this.registry],
      collect() {
        this.set(onFallback() ? 1 : 0);
      },
    });
  }

  /** Requests whose count Redis did not answer in time, each counted on this instance's share (Redis not taken as lost). */
  watchRedisSlowCounts(slowCounts: () => number): void {
    new Counter({
      name: `${METRIC_PREFIX}rate_limiter_redis_slow_counts_total`,
      help: 'Requests whose count Redis did not answer within 200 ms: each was counted on this instance\'s share, and Redis was not taken as lost for it.',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(slowCounts());
      },
    });
  }

  watchDatabasePool(use: () => DatabasePoolUse): void {
    new Gauge({
      name: `${METRIC_PREFIX}db_pool_connections`,
      help: 'Database connections of this instance, by state: in_use (lent, or being opened) or idle.',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        const now = use();
        this.set({ state: 'in_use' }, now.inUse);
        this.set({ state: 'idle' }, now.idle);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}db_pool_waiting`,
      help: 'Callers waiting for a database connection.',
      registers: [this.registry],
      collect() {
        this.set(use().waiting);
      },
    });
    new Counter({
      name: `${METRIC_PREFIX}db_pool_wait_seconds_total`,
      help: 'Seconds callers have spent waiting for a database connection, all together: its rate is the mean number of callers waiting.',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(use().waitedSeconds);
      },
    });
  }

  watchReplicas(reads: ReplicaReads): void {
    new Gauge({
      name: `${METRIC_PREFIX}db_replica_lag_seconds`,
      help: 'Seconds since the oldest change this instance has seen that the replica was not yet seen to have applied; 0 when it has applied them all.',
      labelNames: ['replica'],
      registers: [this.registry],
      collect() {
        for (const replica of reads.replicas) this.set({ replica: replica.name }, replica.lagSeconds());
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}db_replica_pool_connections`,
      help: 'Connections of this instance to each replica, by state: in_use (lent, or being opened or waiting for the replica to apply a change) or idle.',
      labelNames: ['replica', 'state'],
      registers: [this.registry],
      collect() {
        for (const replica of reads.replicas) {
          const now = replica.poolUse();
          this.set({ replica: replica.name, state: 'in_use' }, now.inUse);
          this.set({ replica: replica.name, state: 'idle' }, now.idle);
        }
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}db_replica_pool_waiting`,
      help: 'Reads waiting for a connection to each replica.',
      labelNames: ['replica'],
      registers: [this.registry],
      collect() {
        for (const replica of reads.replicas) this.set({ replica: replica.name }, replica.poolUse().waiting);
      },
    });
    new Counter({
      name: `${METRIC_PREFIX}db_primary_reads_total`,
      help: 'Reads a replica could have taken that went to the primary, by reason: lagging (no replica had applied the changes seen in time), unreachable, or no_position (changes could not be seen, or the primary position not read).',
      labelNames: ['reason'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [reason, count] of Object.entries(reads.primaryReads)) this.inc({ reason }, count);
      },
    });
  }

  attemptMade(outcome: AttemptOutcomeLabel, seconds: number): void {
    this.webhookAttempts.inc({ outcome });
    this.webhookDurations.observe(seconds);
  }

  /** Webhook deliveries still to be made, from the outbox every instance shares; the last figure read while it cannot be. */
  watchWebhookOutbox(pending: () => Promise<number>): void {
    new Gauge({
      name: `${METRIC_PREFIX}webhook_deliveries_waiting`,
      help: 'Webhook deliveries not yet made, due now or later, all partners together (MySQL: every instance\'s; memory: this process\'s).',
      registers: [this.registry],
      async collect() {
        try {
          this.set(await pending());
        } catch {
          // The outbox is out of reach: the scrape still answers, with the last figure.
        }
      },
    });
  }

  /** Answers the response cache holds now, and the bytes they are counted for (MySQL storage with CACHE_TTL_MS above 0). */
  watchResponseCache(cache: ResponseCacheSize): void {
    new Gauge({
      name: `${METRIC_PREFIX}response_cache_entries`,
      help: 'Lookup answers held in the response cache now, misses included (at most CACHE_MAX_ENTRIES).',
      registers: [this.registry],
      collect() {
        this.set(cache.entries);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}response_cache_bytes`,
      help: 'Bytes the answers held in the response cache now are counted for, about what they take in memory (at most CACHE_MAX_BYTES).',
      registers: [this.registry],
      collect() {
        this.set(cache.bytes);
      },
    });
  }

  /** The exposition, in the Prometheus text format. */
  exposition(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private addRoute(route: string): RouteFigures {
    const name = this.routes.size < MAX_ROUTES ? route : UNMATCHED_ROUTE;
    let figures = this.routes.get(name);
    if (figures === undefined) {
      figures = new RouteFigures();
      this.routes.set(name, figures);
    }
    return figures;
  }
}

/** A counter with one label, from counts kept as plain numbers; every value is exposed, zero included. */
function countedFrom<L extends string>(registry: Registry, name: string, help: string, label: string, counts: Readonly<Record<L, number>>): void {
  new Counter({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    collect() {
      this.reset();
      for (const [value, count] of Object.entries<number>(counts)) this.inc({ [label]: value }, count);
    },
  });
}
