import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { PartnerSchema } from '../../src/domain/catalog-format.js';
import { isSandboxCatalog, isSandboxErrorSku, SANDBOX_ERROR_ANSWERS, SANDBOX_ERROR_SKUS, sandboxCatalogOf } from '../../src/domain/sandbox.js';

const PARTNER_ID = new RegExp((PartnerSchema.properties.id as unknown as { pattern: string }).pattern);

describe('a partner\'s sandbox catalog id', function () {
  it('is the partner id behind "~", readable, for every id that leaves room for it', function () {
    expect(sandboxCatalogOf('acme')).to.equal('~acme');
    const longest = 'a'.repeat(62);
    expect(sandboxCatalogOf(longest)).to.equal(`~${longest}`);
  });

  it('fits where a partner id does for an id of the full 63 characters, and tells two such ids apart', function () {
    const first = `${'a'.repeat(62)}b`;
    const second = `${'a'.repeat(62)}c`;
    const [one, two] = [sandboxCatalogOf(first), sandboxCatalogOf(second)];
    expect(one).to.match(/^~[0-9a-f]{62}$/);
    expect(two).to.match(/^~[0-9a-f]{62}$/);
    expect(one).to.not.equal(two);
    // Not the readable id of the 62-character prefix the two share.
    expect(one).to.not.equal(sandboxCatalogOf('a'.repeat(62)));
  });

  it('is never a partner\'s own id, and is told apart from one', function () {
    for (const id of ['acme', '0', 'a-b', `${'z'.repeat(62)}9`]) {
      const catalog = sandboxCatalogOf(id);
      expect(PARTNER_ID.test(catalog), catalog).to.equal(false);
      expect(isSandboxCatalog(catalog)).to.equal(true);
      expect(isSandboxCatalog(id)).to.equal(false);
    }
  });

  it('keeps exactly three SKUs for the errors a test key asks for, matched exactly', function () {
    expect(['TEST-404', 'TEST-429', 'TEST-503'].map(isSandboxErrorSku)).to.deep.equal([true, true, true]);
    expect(['test-429', 'TEST-430', 'TEST-429 ', 'TEST-5030'].map(isSandboxErrorSku)).to.deep.equal([false, false, false, false]);
  });

  it('tells a partner of every error SKU, with the status its number names and the code it is declared with', function () {
    const apiDoc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    for (const sku of SANDBOX_ERROR_SKUS) {
      expect(apiDoc, sku).to.include(`| \`${sku}\` | ${sku.slice('TEST-'.length)} \`${SANDBOX_ERROR_ANSWERS[sku]}\``);
    }
  });
});
