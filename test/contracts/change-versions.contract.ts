import { expect } from 'chai';
import type { ChangeVersions } from '../../src/application/instances/change-versions.js';

export interface ChangeVersionsUnderTest {
  readonly versions: ChangeVersions;
  close(): Promise<void>;
}

/** Version tokens sharing no state with earlier ones. */
export type ChangeVersionsFactory = () => Promise<ChangeVersionsUnderTest>;

/** Every ChangeVersions adapter must pass these. */
export function changeVersionsContract(adapterName: string, factory: ChangeVersionsFactory): void {
  describe(`ChangeVersions contract: ${adapterName}`, function () {
    let subject: ChangeVersionsUnderTest;
    let versions: ChangeVersions;

    beforeEach(async function () {
      subject = await factory();
      versions = subject.versions;
    });
    afterEach(async function () {
      await subject.close();
    });

    const snapshot = async (): Promise<{ keys: string; a: string; b: string }> => ({
      keys: await versions.keysVersion(),
      a: await versions.catalogVersion('partner-a'),
      b: await versions.catalogVersion('partner-b'),
    });

    it('gives the same tokens twice when nothing changed, started fresh where there were none', async function () {
      const first = await snapshot();
      for (const token of Object.values(first)) expect(token).to.be.a('string').that.is.not.empty;
      expect(await snapshot()).to.deep.equal(first);
      expect(first.a).to.not.equal(first.b);
    });

    it('replaces only the key-set token on keysChanged', async function () {
      const before = await snapshot();
      await versions.keysChanged();
      const after = await snapshot();
      expect(after.keys).to.not.equal(before.keys);
      expect(after).to.deep.equal({ ...before, keys: after.keys });
    });

    it('replaces the catalog token of the partners named only, and takes an empty list', async function () {
      const before = await snapshot();
      await versions.catalogsChanged(['partner-a']);
      const after = await snapshot();
      expect(after.a).to.not.equal(before.a);
      expect(after).to.deep.equal({ ...before, a: after.a });
      await versions.catalogsChanged([]);
      expect(await snapshot()).to.deep.equal(after);
    });

    it('never hands out a token it handed out before, across many changes', async function () {
      const seen = new Set<string>();
      const expectNew = (token: string, what: string): void => {
        expect(seen.has(token), `${what} came back: ${token}`).to.equal(false);
        seen.add(token);
      };
      const first = await snapshot();
      expectNew(first.keys, 'key-set token');
      expectNew(first.a, 'catalog token of a');
      expectNew(first.b, 'catalog token of b');
      for (let i = 0; i < 100; i += 1) {
        await versions.keysChanged();
        await versions.catalogsChanged(['partner-a', 'partner-b']);
        const now = await snapshot();
        expectNew(now.keys, `key-set token after change ${i}`);
        expectNew(now.a, `catalog token of a after change ${i}`);
        expectNew(now.b, `catalog token of b after change ${i}`);
      }
    });
  });
}
