import { expect } from 'chai';
import { createConnection } from 'mysql2/promise';
import type { Deployment } from '../../src/composition/deployment.js';
import { fixtureCatalog, KEYS } from '../fixtures/catalog-fixture.js';
import { openTestDeployment } from '../support/deployments.js';
import { importCatalog } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** A figure of the deployment's own metrics, summed over its labels or for one label. */
async function figure(deployment: Deployment, name: string, label?: string): Promise<number> {
  const metric = await deployment.metrics!.registry.getSingleMetric(name)!.get();
  return metric.values.filter((value) => label === undefined || Object.values(value.labels).includes(label)).reduce((sum, value) => sum + value.value, 0);
}

/** Polls a state of the deployment until it holds; the test's own timeout bounds it. */
async function until(holds: () => Promise<boolean>): Promise<void> {
  while (!(await holds())) await new Promise((resolve) => setImmediate(resolve));
}

describe('DATABASE_POOL_SIZE', function () {
  this.timeout(30_000);
  const testDb = useTestDatabase();
  let deployment: Deployment | undefined;
  let server: TestServer | undefined;

  before(async function () {
    await importCatalog(testDb.db, fixtureCatalog());
  });
  afterEach(async function () {
    await server?.close();
    await deployment?.close();
    server = undefined;
    deployment = undefined;
  });

  for (const size of [2, 4]) {
    it(`lends at most ${size} connections at once and queues the other lookups, which are answered once one is free`, async function () {
      // METRICS_PORT only names the listener startService would open; here nothing listens on it.
      deployment = await openTestDeployment({ STORAGE: 'mysql', DATABASE_URL: testDb.url, DATABASE_POOL_SIZE: String(size), CACHE_TTL_MS: '0', METRICS_PORT: '9', RATE_LIMIT_PER_MINUTE: '1000' });
      server = await startTestServer(deployment.api);
      // Every key read and lookup waits on the table locks another session holds.
      const locker = await createConnection({ uri: testDb.url });
      try {
        const [tables] = await locker.query('show tables') as unknown as [Record<string, string>[]];
        await locker.query(`lock tables ${tables.map((row) => `\`${Object.values(row)[0]!}\` write`).join(', ')}`);
        const lookups = Array.from({ length: 6 }, () => server!.request('/api/v1/public/sku/TENT-2P', { headers: { 'X-API-Key': KEYS.acme } }));
        // Once all six have asked for a connection: the size lent, the rest waiting.
        await until(async () => await figure(deployment!, 'pcat_db_pool_waiting') + await figure(deployment!, 'pcat_db_pool_connections', 'in_use') === 6);
        expect(await figure(deployment, 'pcat_db_pool_connections', 'in_use')).to.equal(size);
        expect(await figure(deployment, 'pcat_db_pool_waiting')).to.equal(6 - size);
        await locker.query('unlock tables');
        const answers = await Promise.all(lookups);
        expect(answers.map((answer) => answer.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
        expect(await figure(deployment, 'pcat_db_pool_connections')).to.be.at.most(size);
        expect(await figure(deployment, 'pcat_db_pool_waiting')).to.equal(0);
      } finally {
        await locker.end();
      }
    });
  }
});
