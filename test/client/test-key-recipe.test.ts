import { expect } from 'chai';
import { createClient, PartnerCatalogError } from '../../client/src/index.js';
import { alwaysReady } from '../../src/adapters/memory/always-ready.js';
import { MemoryCatalogStore } from '../../src/adapters/memory/memory-catalog-store.js';
import { MemoryRateLimiter } from '../../src/adapters/memory/memory-rate-limiter.js';
import { systemClock } from '../../src/application/common/clock.js';
import { generateApiKey, hashApiKey } from '../../src/domain/api-key.js';
import { fixtureDocument } from '../fixtures/catalog-fixture.js';
import { importDocument } from '../support/import.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/* The client README's CI recipe, run as written against a real server with a test key. */

describe('client: the CI recipe with a test key', function () {
  let server: TestServer;
  let testKey: string;

  beforeEach(async function () {
    const store = new MemoryCatalogStore();
    await importDocument(store, fixtureDocument());
    testKey = generateApiKey('test');
    store.addKey({ keyId: 'acme-ci', partnerId: 'acme', mode: 'test', sha256: hashApiKey(testKey) });
    server = await startTestServer({ catalog: store, changes: store, keys: store, limiter: new MemoryRateLimiter({ limit: 100, clock: systemClock }), readiness: alwaysReady });
  });
  afterEach(async function () {
    await server.close();
  });

  const refusal = async (promise: Promise<unknown>): Promise<PartnerCatalogError> => {
    const error = await promise.then(() => null, (thrown: unknown) => thrown);
    expect(error).to.be.instanceOf(PartnerCatalogError);
    return error as PartnerCatalogError;
  };

  it('reads the sandbox, and meets each error the recipe names, retried as the README says', async function () {
    const waits: number[] = [];
    const catalog = createClient({ baseUrl: server.url, apiKey: testKey, sleep: (ms) => { waits.push(ms); return Promise.resolve(); } });
    expect((await catalog.getBySku('TENT-2P')).product.title).to.equal('Acme Ridgeline 2-Person Tent');
    expect((await refusal(catalog.getBySku('TEST-404'))).code).to.equal('sku_not_found');
    expect(waits).to.deep.equal([]);

    const limited = await refusal(catalog.getBySku('TEST-429'));
    expect(limited.code).to.equal('rate_limit_exceeded');
    expect(limited.retryAfter).to.be.within(1, 60);
    expect(waits).to.have.lengthOf(2);

    waits.length = 0;
    expect((await refusal(catalog.getBySku('TEST-503'))).code).to.equal('service_unavailable');
    expect(waits).to.deep.equal([2000, 2000]);
  });
});
