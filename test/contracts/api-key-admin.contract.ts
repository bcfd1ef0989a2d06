import { expect } from 'chai';
import type { ApiKeyStore } from '../../src/application/access/api-key-store.js';
import type { ApiKeyAdmin, NewApiKey } from '../../src/application/keys/api-key-admin.js';
import { generateApiKey, hashApiKey, principalOf, type KeyMode } from '../../src/domain/api-key.js';

export interface KeyAdminUnderTest {
  readonly admin: ApiKeyAdmin;
  /** The same storage as the API reads it. */
  readonly keys: ApiKeyStore;
}

/** Called per test: the fixture catalog (partners acme and globex) and nothing else. */
export type KeyAdminFactory = () => Promise<KeyAdminUnderTest>;

const T0 = new Date(Date.UTC(2026, 0, 5, 9, 0, 0, 123));
const later = (ms: number): Date => new Date(T0.getTime() + ms);

function newKey(id: string, partnerId: string, createdAt = T0, label: string | null = null, mode: KeyMode = 'live'): NewApiKey & { key: string } {
  const key = generateApiKey(mode);
  return { id, partnerId, mode, sha256: hashApiKey(key), label, createdAt, key };
}

/** Every ApiKeyAdmin adapter must pass these. */
export function apiKeyAdminContract(adapterName: string, factory: KeyAdminFactory): void {
  describe(`ApiKeyAdmin contract: ${adapterName}`, function () {
    let subject: KeyAdminUnderTest;

    beforeEach(async function () {
      subject = await factory();
    });

    it('knows the catalog\'s partners only', async function () {
      expect(await subject.admin.partnerExists('acme')).to.equal(true);
      expect(await subject.admin.partnerExists('nobody')).to.equal(false);
    });

    it('stores a key by hash: it authenticates at once, and is found and listed with its label and time, oldest first', async function () {
      const first = newKey('acme-k1', 'acme', later(1_000), 'Shop');
      const second = newKey('acme-k2', 'acme', later(2_000));
      await subject.admin.insert(second);
      await subject.admin.insert(first);
      await subject.admin.insert(newKey('globex-k1', 'globex', later(500)));
      expect(await subject.keys.findActiveByHash(first.sha256)).to.deep.equal(principalOf('acme-k1', 'acme', 'live'));
      expect(await subject.admin.find('acme-k1')).to.deep.equal({
        id: 'acme-k1', partnerId: 'acme', mode: 'live', label: 'Shop', createdAt: later(1_000), revokedAt: null, lastUsedAt: null,
      });
      // A test key keeps its mode: it authenticates for the partner's sandbox, not its catalog.
      const test = newKey('acme-t1', 'acme', later(3_000), null, 'test');
      await subject.admin.insert(test);
      expect(await subject.keys.findActiveByHash(test.sha256)).to.deep.equal(principalOf('acme-t1', 'acme', 'test'));
      expect((await subject.admin.find('acme-t1'))?.mode).to.equal('test');
      expect(await subject.admin.find('no-such-key')).to.equal(null);
      const mine = (await subject.admin.list('acme')).filter((k) => k.id.startsWith('acme-k')).map((k) => k.id);
      expect(mine).to.deep.equal(['acme-k1', 'acme-k2']);
      expect((await subject.admin.list('acme')).map((k) => k.partnerId)).to.satisfy((ids: string[]) => ids.every((id) => id === 'acme'));
    });

    it('revokes a key from the next authentication, keeping its first revocation time; an unknown key is null', async function () {
      const key = newKey('acme-k1', 'acme');
      await subject.admin.insert(key);
      expect(await subject.admin.revoke('acme-k1', later(10))).to.deep.equal(later(10));
      expect(await subject.keys.findActiveByHash(key.sha256)).to.equal(null);
      expect(await subject.admin.revoke('acme-k1', later(20))).to.deep.equal(later(10));
      expect((await subject.admin.find('acme-k1'))?.revokedAt).to.deep.equal(later(10));
      expect(await subject.admin.revoke('no-such-key', later(20))).to.equal(null);
    });

    it('replaces a live key in one step, and refuses to replace a revoked one or another partner\'s, storing nothing', async function () {
      const old = newKey('acme-k1', 'acme', T0, 'Shop');
      await subject.admin.insert(old);
      const fresh = newKey('acme-k2', 'acme', later(60_000), 'Shop');
      expect(await subject.admin.replace('acme-k1', fresh)).to.equal(true);
      expect(await subject.keys.findActiveByHash(old.sha256)).to.equal(null);
      expect(await subject.keys.findActiveByHash(fresh.sha256)).to.deep.equal(principalOf('acme-k2', 'acme', 'live'));
      expect((await subject.admin.find('acme-k1'))?.revokedAt).to.deep.equal(later(60_000));
      const again = newKey('acme-k3', 'acme', later(70_000));
      expect(await subject.admin.replace('acme-k1', again)).to.equal(false);
      expect(await subject.admin.find('acme-k3')).to.equal(null);
      const stolen = newKey('globex-k9', 'globex', later(70_000));
      expect(await subject.admin.replace('acme-k2', stolen)).to.equal(false);
      expect(await subject.admin.find('globex-k9')).to.equal(null);
      expect(await subject.keys.findActiveByHash(fresh.sha256)).to.not.equal(null);
    });

    it('keeps the latest "last used" time of each key, ignoring an earlier one and unknown keys', async function () {
      await subject.admin.insert(newKey('acme-k1', 'acme'));
      await subject.admin.insert(newKey('acme-k2', 'acme'));
      await subject.admin.saveLastUsed([{ keyId: 'acme-k1', at: later(5_000) }, { keyId: 'acme-k2', at: later(6_000) }, { keyId: 'nope', at: later(1) }]);
      await subject.admin.saveLastUsed([{ keyId: 'acme-k1', at: later(4_000) }]);
      await subject.admin.saveLastUsed([]);
      expect((await subject.admin.find('acme-k1'))?.lastUsedAt).to.deep.equal(later(5_000));
      expect((await subject.admin.find('acme-k2'))?.lastUsedAt).to.deep.equal(later(6_000));
      await subject.admin.saveLastUsed([{ keyId: 'acme-k1', at: later(9_000) }]);
      expect((await subject.admin.find('acme-k1'))?.lastUsedAt).to.deep.equal(later(9_000));
    });
  });
}
