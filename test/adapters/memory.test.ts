import { expect } from 'chai';
import { systemClock } from '../../src/application/common/clock.js';
import { MemoryApiKeyStore } from '../support/memory-api-key-store.js';
import { MemoryCatalogStore } from '../../src/adapters/memory/memory-catalog-store.js';
import { MemoryChangeVersions } from '../support/memory-change-versions.js';
import { MemoryProductCatalog } from '../support/memory-product-catalog.js';
import { MemoryRateLimiter } from '../../src/adapters/memory/memory-rate-limiter.js';
import { apiKeyStoreContract } from '../contracts/api-key-store.contract.js';
import { catalogImportContract } from '../contracts/catalog-import.contract.js';
import { changeVersionsContract } from '../contracts/change-versions.contract.js';
import { productCatalogContract } from '../contracts/product-catalog.contract.js';
import { rateLimiterContract } from '../contracts/rate-limiter.contract.js';
import { catalogDocument, importDocument } from '../support/import.js';

const noop = (): Promise<void> => Promise.resolve();

// The adapter deployments run: the catalog imported into the store, as a start or a reload does.
productCatalogContract('memory (MemoryCatalogStore)', async (catalog) => {
  const store = new MemoryCatalogStore();
  await importDocument(store, catalogDocument(catalog));
  return { catalog: store, close: noop };
});
// The test double other suites build without an import answers the same.
productCatalogContract('memory test double (MemoryProductCatalog)', (catalog) => Promise.resolve({ catalog: new MemoryProductCatalog(catalog), close: noop }));

apiKeyStoreContract('memory', (catalog) => {
  const store = new MemoryApiKeyStore(catalog);
  return Promise.resolve({
    store,
    revoke: (keyId) => {
      store.revoke(keyId);
      return Promise.resolve();
    },
    close: noop,
  });
});

catalogImportContract('memory', () => ({
  fresh: () => {
    const store = new MemoryCatalogStore();
    return Promise.resolve({
      store,
      catalog: store,
      keys: store,
      feed: store,
      issueKey: (keyId, partnerId, sha256) => Promise.resolve(store.addKey({ keyId, partnerId, mode: 'live', sha256 })),
      revokeKey: (keyId) => Promise.resolve(void store.revokeKey(keyId)),
    });
  },
}));

rateLimiterContract('memory', ({ limit, windowMs }) =>
  Promise.resolve({ limiter: new MemoryRateLimiter({ limit, windowMs, clock: systemClock }), close: noop }));

describe('MemoryChangeVersions', function () {
  changeVersionsContract('memory', () => Promise.resolve({ versions: new MemoryChangeVersions(), close: noop }));
});

describe('MemoryRateLimiter bound', function () {
  it('tracks at most maxKeys keys, forgetting the least recently seen first', async function () {
    const limiter = new MemoryRateLimiter({ limit: 1, clock: systemClock, maxKeys: 2 });
    for (const key of ['a', 'b', 'c']) expect((await limiter.consume(key)).allowed, key).to.equal(true);
    // 'a' was forgotten to make room for 'c': its window starts again; 'c', still tracked, is over its limit.
    expect((await limiter.consume('a')).allowed).to.equal(true);
    expect((await limiter.consume('c')).allowed).to.equal(false);
  });
});
