import { expect } from 'chai';
import fc from 'fast-check';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from '../../src/domain/api-key.js';
import { codeOf } from '../support/domain-error.js';
import { parseProductId } from '../../src/domain/product-id.js';
import { countRequest } from '../../src/domain/rate-limit.js';
import { isValidSku, parseSku } from '../../src/domain/sku.js';

const SKU_CHARS = 'ABCXYZabcxyz0189._-';

describe('SKU rule', function () {
  it('accepts every string of 1 to 50 allowed characters', function () {
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom(...SKU_CHARS.split('')), minLength: 1, maxLength: 50 }), (sku) => {
      expect(parseSku(sku)).to.equal(sku);
    }));
  });

  it('refuses anything else with invalid_sku', function () {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 70 }), (raw) => {
      const allowed = raw.length >= 1 && raw.length <= 50 && /^[A-Za-z0-9._-]*$/.test(raw);
      expect(isValidSku(raw)).to.equal(allowed);
      if (!allowed) expect(codeOf(() => parseSku(raw))).to.equal('invalid_sku');
    }));
    expect(codeOf(() => parseSku('a'.repeat(51)))).to.equal('invalid_sku');
    expect(codeOf(() => parseSku('ABC\n'))).to.equal('invalid_sku');
  });
});

describe('product ID rule', function () {
  it('accepts positive integers up to 2^53-1 written without leading zeros', function () {
    fc.assert(fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (n) => {
      expect(parseProductId(String(n))).to.equal(n);
    }));
  });

  it('refuses zero, leading zeros, signs, fractions and values past 2^53-1', function () {
    for (const raw of ['', '0', '00', '007', '+1', '-1', '1.0', '1e2', '0x10', '9007199254740992', '12345678901234567890']) {
      expect(codeOf(() => parseProductId(raw)), raw).to.equal('invalid_product_id');
    }
  });
});

describe('API keys', function () {
  it('issues well-formed keys with 40 random base62 characters, never the same twice', function () {
    const keys = Array.from({ length: 200 }, generateApiKey);
    for (const key of keys) expect(key).to.match(/^pcat_live_[A-Za-z0-9]{40}$/).and.satisfy(isWellFormedApiKey);
    expect(new Set(keys).size).to.equal(keys.length);
  });

  it('recognises only the live and test prefixes with 32 to 64 base62 characters', function () {
    for (const prefix of ['pcat_live_', 'pcat_test_']) {
      expect(isWellFormedApiKey(`${prefix}${'a'.repeat(32)}`), prefix).to.equal(true);
      expect(isWellFormedApiKey(`${prefix}${'a'.repeat(64)}`), prefix).to.equal(true);
      for (const key of [`${prefix}${'a'.repeat(31)}`, `${prefix}${'a'.repeat(65)}`, `${prefix}${'a'.repeat(39)}-`, `${prefix.toUpperCase()}${'a'.repeat(40)}`]) {
        expect(isWellFormedApiKey(key), key).to.equal(false);
      }
    }
    // Any other mode word is not a key, however well the rest is formed.
    for (const key of [`pcat_prod_${'a'.repeat(40)}`, `pcat_${'a'.repeat(40)}`, `pcat_live_test_${'a'.repeat(40)}`]) {
      expect(isWellFormedApiKey(key), key).to.equal(false);
    }
  });

  it('hashes the whole key, prefix included, as lowercase hex SHA-256', function () {
    // sha256("pcat_live_" + "a"*40), computed independently with sha256sum.
    expect(hashApiKey(`pcat_live_${'a'.repeat(40)}`)).to.equal('01d00e1a1b7a96020d9960c6088b97ce4f974872e81149165a4bba1ea4ca214c');
    expect(hashApiKey('pcat_live_x')).to.match(/^[0-9a-f]{64}$/);
  });
});

describe('rate-limit window', function () {
  it('starts with the first request, counts within it, and refills whole when it ends', function () {
    let state = countRequest(undefined, 1_000, 2, 60_000);
    expect(state.status).to.deep.equal({ allowed: true, limit: 2, remaining: 1, resetSeconds: 60 });
    state = countRequest(state.window, 30_500, 2, 60_000);
    expect(state.status).to.deep.equal({ allowed: true, limit: 2, remaining: 0, resetSeconds: 31 });
    state = countRequest(state.window, 60_999, 2, 60_000);
    expect(state.status).to.deep.equal({ allowed: false, limit: 2, remaining: 0, resetSeconds: 1 });
    state = countRequest(state.window, 61_000, 2, 60_000);
    expect(state.status).to.deep.equal({ allowed: true, limit: 2, remaining: 1, resetSeconds: 60 });
  });
});
