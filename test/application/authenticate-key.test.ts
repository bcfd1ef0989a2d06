import { expect } from 'chai';
import { MemoryApiKeyStore } from '../support/memory-api-key-store.js';
import { accountOf, MemoryAuthFailureGuard } from '../../src/adapters/memory/memory-auth-failure-guard.js';
import { AuthenticateKey } from '../../src/application/access/authenticate-key.js';
import type { ApiKeyStore } from '../../src/application/access/api-key-store.js';
import { generateApiKey, principalOf } from '../../src/domain/api-key.js';
import { TooManyFailedAuthentications } from '../../src/domain/errors.js';
import { codeOfRejection } from '../support/domain-error.js';
import { fixtureCatalog, KEYS } from '../fixtures/catalog-fixture.js';

/** The real in-memory store, counting how often it is asked. */
function countingStore(): { store: ApiKeyStore; reads: () => number } {
  const inner = new MemoryApiKeyStore(fixtureCatalog());
  let reads = 0;
  return {
    store: { findActiveByHash: (hash) => { reads += 1; return inner.findActiveByHash(hash); }, isStillActive: (p) => inner.isStillActive(p) },
    reads: () => reads,
  };
}

describe('AuthenticateKey', function () {
  it('resolves the partner of a valid key with one storage read', async function () {
    const { store, reads } = countingStore();
    expect(await new AuthenticateKey(store).execute({ apiKey: KEYS.globex })).to.deep.equal(principalOf('globex-prod', 'globex', 'live'));
    expect(reads()).to.equal(1);
  });

  it('refuses a key of the wrong shape without touching storage', async function () {
    const { store, reads } = countingStore();
    const authenticate = new AuthenticateKey(store);
    for (const key of ['x', 'pcat_live_', `pcat_live_${'a'.repeat(200)}`, `sk_live_${'a'.repeat(40)}`]) {
      expect(await codeOfRejection(authenticate.execute({ apiKey: key }))).to.equal('invalid_api_key');
      expect(await codeOfRejection(authenticate.execute({ authorization: `Bearer ${key}` }))).to.equal('invalid_api_key');
    }
    expect(await codeOfRejection(authenticate.execute({ authorization: 'Token abc' }))).to.equal('invalid_api_key');
    expect(await codeOfRejection(authenticate.execute({}))).to.equal('missing_api_key');
    expect(reads()).to.equal(0);
  });
});

describe('AuthenticateKey with a guard on failed authentications', function () {
  const clock = { t: 1_000_000, now() { return this.t; } };
  const setup = () => {
    const { store, reads } = countingStore();
    const guard = new MemoryAuthFailureGuard({ failuresPerWindow: 3, clock, windowMs: 60_000 });
    return { authenticate: new AuthenticateKey(store, guard), reads };
  };
  const madeUp = (): string => generateApiKey();

  it('holds an address back after its budget of failures, before any storage read, until the window ends', async function () {
    const { authenticate, reads } = setup();
    for (let i = 0; i < 3; i += 1) expect(await codeOfRejection(authenticate.execute({ apiKey: madeUp(), clientAddress: '192.0.2.1' }))).to.equal('invalid_api_key');
    expect(reads()).to.equal(3);
    clock.t += 15_000;
    const held = await authenticate.execute({ apiKey: madeUp(), clientAddress: '192.0.2.1' }).catch((error: unknown) => error);
    expect(held).to.be.instanceOf(TooManyFailedAuthentications);
    expect((held as TooManyFailedAuthentications).code).to.equal('rate_limit_exceeded');
    expect((held as TooManyFailedAuthentications).retryAfterSeconds).to.equal(45);
    expect(await codeOfRejection(authenticate.execute({ clientAddress: '192.0.2.1' }))).to.equal('rate_limit_exceeded');
    expect(reads()).to.equal(3);
    // Another address is not affected.
    expect(await authenticate.execute({ apiKey: KEYS.globex, clientAddress: '192.0.2.2' })).to.deep.equal(principalOf('globex-prod', 'globex', 'live'));
    clock.t += 45_000;
    expect(await codeOfRejection(authenticate.execute({ apiKey: madeUp(), clientAddress: '192.0.2.1' }))).to.equal('invalid_api_key');
  });

  it('counts missing and malformed keys as failures too', async function () {
    const { authenticate, reads } = setup();
    expect(await codeOfRejection(authenticate.execute({ clientAddress: '192.0.2.3' }))).to.equal('missing_api_key');
    expect(await codeOfRejection(authenticate.execute({ authorization: 'Basic abc', clientAddress: '192.0.2.3' }))).to.equal('invalid_api_key');
    expect(await codeOfRejection(authenticate.execute({ apiKey: 'short', clientAddress: '192.0.2.3' }))).to.equal('invalid_api_key');
    expect(await codeOfRejection(authenticate.execute({ apiKey: KEYS.globex, clientAddress: '192.0.2.3' }))).to.equal('rate_limit_exceeded');
    expect(reads()).to.equal(0);
  });

  it('still serves, from a held-back address, a key that authenticated within the window', async function () {
    const { authenticate } = setup();
    await authenticate.execute({ apiKey: KEYS.acme, clientAddress: '192.0.2.4' });
    for (let i = 0; i < 3; i += 1) await codeOfRejection(authenticate.execute({ apiKey: madeUp(), clientAddress: '192.0.2.4' }));
    expect(await authenticate.execute({ apiKey: KEYS.acme, clientAddress: '192.0.2.4' })).to.deep.equal(principalOf('acme-prod', 'acme', 'live'));
    expect(await codeOfRejection(authenticate.execute({ apiKey: KEYS.globex, clientAddress: '192.0.2.4' }))).to.equal('rate_limit_exceeded');
  });

  it('counts an IPv6 client with its whole /64', async function () {
    const { authenticate } = setup();
    for (const host of ['1', '2', 'abcd:1', 'ffff:ffff:ffff:ffff']) await codeOfRejection(authenticate.execute({ apiKey: madeUp(), clientAddress: `2001:db8:1:2::${host}` }));
    expect(await codeOfRejection(authenticate.execute({ apiKey: madeUp(), clientAddress: '2001:db8:1:3::1' }))).to.equal('invalid_api_key');
    expect(await codeOfRejection(authenticate.execute({ apiKey: madeUp(), clientAddress: '2001:0db8:0001:0002:0:0:0:9' }))).to.equal('rate_limit_exceeded');
    expect(accountOf('::ffff:192.0.2.9')).to.equal('192.0.2.9');
    expect(accountOf('::1')).to.equal('0:0:0:0::/64');
  });
});
