import { expect } from 'chai';
import { MemoryApiKeyStore } from '../../src/adapters/memory/memory-api-key-store.js';
import { AuthenticateKey } from '../../src/application/authenticate-key.js';
import type { ApiKeyStore } from '../../src/application/ports/api-key-store.js';
import { DomainError } from '../../src/domain/errors.js';
import { fixtureCatalog, KEYS } from '../fixtures/catalog-fixture.js';

/** The real in-memory store, counting how often it is asked. */
function countingStore(): { store: ApiKeyStore; reads: () => number } {
  const inner = new MemoryApiKeyStore(fixtureCatalog());
  let reads = 0;
  return {
    store: { findActiveByHash: (hash) => { reads += 1; return inner.findActiveByHash(hash); } },
    reads: () => reads,
  };
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
  return undefined;
}

describe('AuthenticateKey', function () {
  it('resolves the partner of a valid key with one storage read', async function () {
    const { store, reads } = countingStore();
    expect(await new AuthenticateKey(store).execute({ apiKey: KEYS.globex })).to.deep.equal({ keyId: 'globex-prod', partnerId: 'globex' });
    expect(reads()).to.equal(1);
  });

  it('refuses a key of the wrong shape without touching storage', async function () {
    const { store, reads } = countingStore();
    const authenticate = new AuthenticateKey(store);
    for (const key of ['x', 'pcat_live_', `pcat_live_${'a'.repeat(200)}`, `sk_live_${'a'.repeat(40)}`]) {
      expect(await codeOf(authenticate.execute({ apiKey: key }))).to.equal('invalid_api_key');
      expect(await codeOf(authenticate.execute({ authorization: `Bearer ${key}` }))).to.equal('invalid_api_key');
    }
    expect(await codeOf(authenticate.execute({ authorization: 'Token abc' }))).to.equal('invalid_api_key');
    expect(await codeOf(authenticate.execute({}))).to.equal('missing_api_key');
    expect(reads()).to.equal(0);
  });
});
