import { expect } from 'chai';
import type { ApiKeyStore } from '../../src/application/access/api-key-store.js';
import { hashApiKey, principalOf } from '../../src/domain/api-key.js';
import type { Catalog } from '../../src/domain/catalog.js';
import { fixtureCatalog, KEYS } from '../fixtures/catalog-fixture.js';

export interface KeyStoreUnderTest {
  readonly store: ApiKeyStore;
  /** Revokes a key the way an operator would with this adapter. */
  revoke(keyId: string): Promise<void>;
  close(): Promise<void>;
}

export type KeyStoreFactory = (catalog: Catalog) => Promise<KeyStoreUnderTest>;

/** Every ApiKeyStore adapter must pass these, against the shared fixture. */
export function apiKeyStoreContract(adapterName: string, factory: KeyStoreFactory): void {
  describe(`ApiKeyStore contract: ${adapterName}`, function () {
    let subject: KeyStoreUnderTest;

    beforeEach(async function () {
      subject = await factory(fixtureCatalog());
    });
    afterEach(async function () {
      await subject.close();
    });

    it('resolves an active key by its hash to its id, partner, mode and catalog', async function () {
      expect(await subject.store.findActiveByHash(hashApiKey(KEYS.acme))).to.deep.equal(principalOf('acme-prod', 'acme', 'live'));
      expect(await subject.store.findActiveByHash(hashApiKey(KEYS.globex))).to.deep.equal(principalOf('globex-prod', 'globex', 'live'));
    });

    it('does not resolve a key revoked in the catalog, nor an unknown one', async function () {
      expect(await subject.store.findActiveByHash(hashApiKey(KEYS.acmeRevoked))).to.equal(null);
      expect(await subject.store.findActiveByHash(hashApiKey(KEYS.unknown))).to.equal(null);
    });

    it('refuses a key from the very next lookup after it is revoked, and only that key', async function () {
      expect(await subject.store.findActiveByHash(hashApiKey(KEYS.acme))).to.not.equal(null);
      await subject.revoke('acme-prod');
      expect(await subject.store.findActiveByHash(hashApiKey(KEYS.acme))).to.equal(null);
      expect(await subject.store.findActiveByHash(hashApiKey(KEYS.acmeSecond))).to.deep.equal(principalOf('acme-staging', 'acme', 'live'));
    });

    it('does not match a hash that differs only in letter case', async function () {
      expect(await subject.store.findActiveByHash(hashApiKey(KEYS.acme).toUpperCase())).to.equal(null);
    });
  });
}
