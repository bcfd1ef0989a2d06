import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { readConfig } from '../../src/adapters/config/config.js';
import { createLogger } from '../../src/adapters/logging/logger.js';
import { openDeployment, type Deployment } from '../../src/composition/deployment.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';
import { catalogDocument } from './import.js';

/**
 * The settings every test deployment starts from: no listener of its own beyond what a test starts,
 * and quiet. Tests name the rest as an operator would, in the variables' own words.
 */
const TEST_SETTINGS: Readonly<Record<string, string>> = { METRICS_PORT: '0', PORTAL_PORT: '0', LOG_LEVEL: 'silent', AUTH_FAILURES_PER_MINUTE: '1000000000' };

let fixtureFile: string | undefined;

/** The shared fixture written once per process as the catalog file an operator would give memory storage. */
export function fixtureCatalogFile(): string {
  if (fixtureFile === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'pcat-fixture-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'catalog.json');
    writeFileSync(file, JSON.stringify(catalogDocument(fixtureCatalog())));
    fixtureFile = file;
  }
  return fixtureFile;
}

/**
 * A deployment opened by the composition root, exactly as the service opens one, from settings given
 * as environment variables. A test that needs an adapter of its own puts it over the deployment's
 * `api` when it starts its server.
 */
export function openTestDeployment(settings: Readonly<Record<string, string>>, options: { logger?: Logger } = {}): Promise<Deployment> {
  const config = readConfig({ ...TEST_SETTINGS, ...settings });
  return openDeployment(config, options.logger ?? createLogger('silent'));
}

/** Memory storage over the shared fixture, with the given limit a minute. */
export function openMemoryDeployment(options: { limit?: number; logger?: Logger } = {}): Promise<Deployment> {
  return openTestDeployment({ CATALOG_FILE: fixtureCatalogFile(), RATE_LIMIT_PER_MINUTE: String(options.limit ?? 100) }, options);
}
