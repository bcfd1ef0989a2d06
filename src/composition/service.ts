import type { Logger } from 'pino';
import type { ListenerSettings } from '../adapters/config/listener-config.js';
import { createHttpHandler, type HttpHandler, type HttpHandlerOptions } from '../adapters/http/handler.js';
import { skuLookupPath } from '../adapters/http/operations.js';
import { startHttpServer } from '../adapters/http/server.js';
import { clientAddressResolver, trustedProxies, type TrustedProxies } from '../adapters/listening/client-address.js';
import { openFileLimit, shareDescriptors, type ListenerShare } from '../adapters/listening/descriptor-budget.js';
import type { RunningServer } from '../adapters/listening/guarded-server.js';
import { startMetricsServer, type RunningMetricsServer } from '../adapters/metrics/metrics-server.js';
import type { PrometheusMetrics } from '../adapters/metrics/prometheus-metrics.js';
import { createPortalApp } from '../adapters/portal/portal-app.js';
import { invitationUrl } from '../adapters/portal/portal-paths.js';
import { startPortalServer, type RunningPortal } from '../adapters/portal/portal-server.js';
import { TIMEOUTS } from '../adapters/timeouts.js';
import { startDeliveryLoop } from '../adapters/webhooks/delivery-loop.js';
import { KEY_USAGE_FLUSH_MS } from '../application/access/key-usage.js';
import { ADMIN_RECORDS_PRUNE_INTERVAL_MS } from '../domain/admin.js';
import { TOKENS } from './container.js';
import type { Deployment } from './deployment.js';
import { reasonOf } from '../domain/failure-reason.js';

/** The demo partner's admin, invited at every start of the embedded demo. */
const DEMO_ADMIN_EMAIL = 'admin@demo.example';

/** A started process: what to print for the person who started it, and how to stop it. */
export interface RunningService {
  /** Lines for the terminal once everything listens: the demo's key and its admin invitation. */
  readonly greeting: string;
  /**
   * Answers `/readyz` 503 at once and keeps every listener serving for SHUTDOWN_DRAIN_MS, so load
   * balancers stop sending here; then closes the listeners within the grace period
   * (each keep-alive connection's next answer says `Connection: close`, requests in flight finish),
   * finishes deliveries, writes the last key uses, and closes the storage.
   */
  stop(): Promise<void>;
}

/** The partner API's request handler over a deployment: what its listener serves, and what HTTP tests serve. */
export function apiHandler(deployment: Deployment, options: HttpHandlerOptions = {}): HttpHandler {
  return createHttpHandler(deployment.container.get(TOKENS.HttpDependencies), options);
}

/**
 * Starts what the role runs over an opened deployment: the API's listener, the portal's and the
 * metrics', and, whatever the role, the webhook deliveries and the key-usage writes.
 */
export async function startService(deployment: Deployment, logger: Logger): Promise<RunningService> {
  const { config, container, metrics, keyUsage } = deployment;
  const { listeners } = config;
  const proxies = trustedProxies(listeners.trustedProxies);
  const servesApi = listeners.role !== 'portal';
  const budget = shareDescriptors(openFileLimit(), {
    ...(servesApi ? { apiMaxConnections: listeners.api.maxConnections } : {}),
    portal: listeners.portal.port !== 0,
    metrics: metrics !== undefined,
  });
  logger.info({ descriptors: budget }, 'descriptors shared among the listeners');
  const metricsServer = metrics === undefined ? undefined : await startMetrics(metrics, listeners.metrics, budget.metrics!, logger);
  const server = servesApi ? await startApi(deployment, budget.api!, proxies, logger) : undefined;
  const flushUsage = (): Promise<void> => keyUsage.flush(deployment.admin.keys).then(() => undefined, (error: unknown) => {
    logger.warn({ reason: reasonOf(error) }, 'keys: last use not written; kept for the next minute');
  });
  const flushing = setInterval(() => void flushUsage(), KEY_USAGE_FLUSH_MS);
  flushing.unref();
  const portal = listeners.portal.port === 0 ? undefined : await startPortal(deployment, { share: budget.portal!, proxies }, logger);
  // Whoever runs the portal keeps its records within their retention (README, partner portal).
  const pruning = portal === undefined ? undefined : pruneAdminRecordsEvery(ADMIN_RECORDS_PRUNE_INTERVAL_MS, deployment, logger);
  // Every instance delivers, whatever its role: the outbox's claims keep two from making one attempt.
  const deliveries = startDeliveryLoop(container.get(TOKENS.DeliverWebhooks), logger, config.webhooks.pollMs);
  logger.info({ role: listeners.role, url: server?.url, metricsUrl: metricsServer?.url, portalUrl: portal?.url, storage: config.storage.kind, rateLimitStore: config.rateLimits.store }, 'listening');
  const { demo } = deployment;
  const greeting = [
    demo !== undefined && server !== undefined ? demoBanner(server.url, demo.key, demo.testKey) : '',
    demo !== undefined && portal !== undefined ? await demoInvitation(deployment, demo.partnerId, portal.url) : '',
  ].join('');
  return {
    greeting,
    stop: async () => {
      const drainMs = listeners.shutdownDrainMs;
      deployment.notReady();
      if (drainMs > 0) {
        logger.info({ drainMs }, 'not ready; serving on while load balancers take this instance out');
        await new Promise((resolve) => setTimeout(resolve, drainMs));
      }
      // The figures stay readable while requests in flight finish.
      clearInterval(flushing);
      clearInterval(pruning);
      await Promise.all([server?.close(TIMEOUTS.shutdownGraceMs), portal?.close(TIMEOUTS.shutdownGraceMs)]);
      await deliveries.stop(TIMEOUTS.shutdownGraceMs);
      await metricsServer?.close(TIMEOUTS.shutdownGraceMs);
      await flushUsage();
      await deployment.close();
    },
  };
}

/** The partner API's listener, within its share of the descriptors. */
function startApi(deployment: Deployment, share: ListenerShare, proxies: TrustedProxies, logger: Logger): Promise<RunningServer> {
  const { listeners: { api: listener }, openapi } = deployment.config;
  const host = listener.host.includes(':') ? `[${listener.host}]` : listener.host;
  const publicBaseUrl = listener.publicBaseUrl ?? `http://${host}:${listener.port}`;
  const { name, email, url } = openapi.contact;
  const documentInfo = {
    contact: { name, ...(email === null ? {} : { email }), ...(url === null ? {} : { url }) },
    ...(openapi.termsUrl === null ? {} : { termsUrl: openapi.termsUrl }),
  };
  return startHttpServer(apiHandler(deployment, { clientAddress: clientAddressResolver(proxies), publicBaseUrl, documentInfo }), {
    port: listener.port,
    host: listener.host,
    logger,
    limits: { maxConnections: share.connections, maxHeldRefusals: share.heldRefusals, maxConnectionsPerAddress: listener.maxConnectionsPerAddress, trustedProxies: proxies },
  });
}

/** `/metrics` on its own listener; a port that cannot be had stops the start, naming the variables. */
function startMetrics(metrics: PrometheusMetrics, listener: ListenerSettings['metrics'], share: ListenerShare, logger: Logger): Promise<RunningMetricsServer> {
  return startMetricsServer(metrics, { port: listener.port, host: listener.host, share, logger });
}

/** The partner portal on its own listener; a port that cannot be had stops the start, naming the variables. */
function startPortal(deployment: Deployment, listener: { share: ListenerShare; proxies: TrustedProxies }, logger: Logger): Promise<RunningPortal> {
  const { metrics } = deployment;
  const settings = deployment.config.listeners.portal;
  const app = createPortalApp(deployment.container.get(TOKENS.PortalUseCases), {
    logger, secureCookies: settings.secureCookies, clientAddress: clientAddressResolver(listener.proxies), ...(metrics === undefined ? {} : { metrics }),
  });
  return startPortalServer(app, {
    port: settings.port, host: settings.host, share: listener.share, trustedProxies: listener.proxies, publicUrl: settings.publicUrl, logger,
  });
}

/** Prunes failed sign-ins, ended locks and old audit events now and every `intervalMs`; a failure is logged and tried again next time. */
function pruneAdminRecordsEvery(intervalMs: number, deployment: Deployment, logger: Logger): NodeJS.Timeout {
  const prune = deployment.container.get(TOKENS.PruneAdminRecords);
  const run = (): void => void prune.execute().catch((error: unknown) => {
    logger.warn({ reason: reasonOf(error) }, 'portal: old sign-in failures and audit events not pruned; tried again later');
  });
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return timer;
}

/** The one place a key is ever printed by the server: the demo's, to its own terminal. */
function demoBanner(url: string, key: string, testKey: string): string {
  return [
    '',
    'Demo catalog loaded. This key for the demo partner is shown once and lives until the process stops:',
    `  ${key}`,
    'Try it:',
    `  curl -s -H 'Authorization: Bearer ${key}' ${url}${skuLookupPath('TENT-2P')}`,
    'A test key of the demo partner, which reads its sandbox and answers TEST-404, TEST-429 and TEST-503 with those errors:',
    `  curl -s -H 'Authorization: Bearer ${testKey}' ${url}${skuLookupPath('TEST-429')}`,
    '',
    '',
  ].join('\n');
}

/** The demo's admin invitation, printed beside its key, so a new user opens the portal at once. */
async function demoInvitation(deployment: Deployment, partnerId: string, portalUrl: string): Promise<string> {
  const invitation = await deployment.container.get(TOKENS.InviteAdmin).execute({ partnerId, email: DEMO_ADMIN_EMAIL });
  return [
    'Partner portal: create the demo partner\'s admin account here (the link works once, until the process stops),',
    'then make, replace and revoke keys under Settings, API keys:',
    `  ${invitationUrl(deployment.config.listeners.portal.publicUrl ?? portalUrl, invitation.token)}`,
    '',
    '',
  ].join('\n');
}
