import { loadDotEnv, readConfig } from './adapters/config/config.js';
import { warnOfCollectorThreadsOnOneCore } from './adapters/config/one-core.js';
import { warnOfWeakeningSettings } from './adapters/config/weakening-settings.js';
import { createLogger } from './adapters/logging/logger.js';
import { checkDatabaseAtStart, checkReplicasAtStart } from './adapters/mysql/database-at-start.js';
import { TIMEOUTS } from './adapters/timeouts.js';
import { databaseTls, openDeployment } from './composition/deployment.js';
import { startService } from './composition/service.js';
import { reasonOf } from './domain/failure-reason.js';

/** The service's process: the configuration read, the deployment opened and started, signals handled. */
async function main(): Promise<void> {
  loadDotEnv();
  const config = readConfig(process.env);
  const logger = createLogger(config.logLevel, undefined, { traceIds: config.tracing !== null });
  warnOfWeakeningSettings(config, logger);
  warnOfCollectorThreadsOnOneCore(logger);
  const { storage } = config;
  if (storage.kind === 'mysql' && storage.databaseUrl !== null) {
    const tls = databaseTls(storage.tls);
    await checkDatabaseAtStart(storage.databaseUrl, tls, logger);
    await checkReplicasAtStart(storage.replicas.urls, tls, logger);
  }
  const deployment = await openDeployment(config, logger);
  const { reloadCatalog } = deployment;
  if (reloadCatalog) process.on('SIGHUP', () => void reloadCatalog('SIGHUP'));
  const service = await startService(deployment, logger);
  process.stdout.write(service.greeting);

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // A hung close must not keep the process alive past the drain and the grace period.
    setTimeout(() => process.exit(1), config.listeners.shutdownDrainMs + TIMEOUTS.shutdownGraceMs + TIMEOUTS.shutdownHangMarginMs).unref();
    void service.stop().then(() => {
      logger.info('stopped');
      process.exit(0);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  // One clear reason, no stack: a bad variable, an unreadable or invalid catalog.
  process.stderr.write(`partner-catalog-api: failed to start: ${reasonOf(error)}\n`);
  process.exit(1);
});
