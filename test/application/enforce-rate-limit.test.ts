import { expect } from 'chai';
import { MemoryApiKeyStore } from '../support/memory-api-key-store.js';
import { MemoryRateLimiter } from '../../src/adapters/memory/memory-rate-limiter.js';
import { EnforceRateLimit } from '../../src/application/access/enforce-rate-limit.js';
import { principalOf } from '../../src/domain/api-key.js';
import type { Principal } from '../../src/domain/api-key.js';
import { DomainError } from '../../src/domain/errors.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';

const ACME: Principal = principalOf('acme-prod', 'acme', 'live');
const LIMIT = 2;

/** Over a limit of LIMIT per window, with the clock standing still; `outcome` is 'allowed' or the refusal's code. */
function setup(): { outcome: (principal: Principal) => Promise<string>; keys: MemoryApiKeyStore } {
  const keys = new MemoryApiKeyStore(fixtureCatalog());
  const enforce = new EnforceRateLimit(new MemoryRateLimiter({ limit: LIMIT, clock: { now: () => 1_000_000 } }), keys);
  const outcome = (principal: Principal): Promise<string> => enforce.execute(principal).then(
    () => 'allowed',
    (error: unknown) => {
      if (error instanceof DomainError) return error.code;
      throw error;
    },
  );
  return { outcome, keys };
}

describe('EnforceRateLimit', function () {
  it('lets a live key through up to the limit, then refuses it as over the limit', async function () {
    const { outcome } = setup();
    for (let i = 0; i < LIMIT; i += 1) expect(await outcome(ACME)).to.equal('allowed');
    expect(await outcome(ACME)).to.equal('rate_limit_exceeded');
  });

  it('refuses a key revoked since it was checked as invalid, before and after its limit', async function () {
    const { outcome, keys } = setup();
    expect(await outcome(ACME)).to.equal('allowed');
    keys.revoke('acme-prod');
    expect(await outcome(ACME), 'within the limit').to.equal('invalid_api_key');
    for (let i = 0; i < 3; i += 1) expect(await outcome(ACME), 'over the limit').to.equal('invalid_api_key');
    expect(await outcome(principalOf('acme-staging', 'acme', 'live')), 'another key of the partner').to.equal('allowed');
  });
});
