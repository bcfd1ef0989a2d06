import { createRequire } from 'node:module';
import { fixtureCatalogFile, openTestDeployment } from './deployments.js';
import { startTestServer } from './test-server.js';
import { KEYS } from '../fixtures/catalog-fixture.js';

/*
 * Run in a process of its own (node --import tsx): opens a memory deployment with the settings given
 * as JSON in argv[2], answers one lookup, and prints whether the OpenTelemetry SDK's modules were
 * loaded. The SDK is CommonJS, so whatever imported it left it in require's cache.
 */
const settings = JSON.parse(process.argv[2] ?? '{}') as Record<string, string>;
const deployment = await openTestDeployment({ CATALOG_FILE: fixtureCatalogFile(), ...settings });
const server = await startTestServer(deployment.api);
const response = await server.request('/api/v1/public/sku/TENT-2P', { headers: { 'X-API-Key': KEYS.acme } });
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) => /@opentelemetry[\\/](sdk-trace|exporter-|otlp-|context-async-hooks)/.test(path));
process.stdout.write(`${JSON.stringify({ status: response.status, sdkModules: loaded.length })}\n`);
await server.close();
await deployment.close();
