import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFileLimit, RESERVED_DESCRIPTORS, shareDescriptors, type DescriptorBudget } from '../../src/adapters/listening/descriptor-budget.js';

/** Every descriptor a budget hands out, the reserve included. */
const spent = (budget: DescriptorBudget): number => budget.reserved +
  [budget.api, budget.portal, budget.metrics].reduce((sum, share) => sum + (share === undefined ? 0 : share.connections + share.heldRefusals), 0);

describe('the descriptor budget', function () {
  it('shares 4,096 descriptors so that the listeners together can never take more than the process has', function () {
    const budget = shareDescriptors(4_096, { apiMaxConnections: 4_096, portal: true, metrics: true });
    expect(budget).to.deep.equal({
      limit: 4_096,
      reserved: RESERVED_DESCRIPTORS,
      api: { connections: 2_586, heldRefusals: 862 },
      portal: { connections: 240, heldRefusals: 120 },
      metrics: { connections: 16, heldRefusals: 16 },
    });
    expect(spent(budget)).to.be.at.most(4_096);
  });

  it('keeps a lower MAX_CONNECTIONS, and gives the API everything when the portal and metrics are off', function () {
    expect(shareDescriptors(4_096, { apiMaxConnections: 1_000, portal: true, metrics: true }).api).to.deep.equal({ connections: 1_000, heldRefusals: 862 });
    const alone = shareDescriptors(4_096, { apiMaxConnections: 100_000, portal: false, metrics: false });
    expect(alone.api).to.deep.equal({ connections: 2_880, heldRefusals: 960 });
    expect(spent(alone)).to.equal(4_096);
  });

  it('gives a portal-only process (ROLE=portal) its bounded share and no API', function () {
    const budget = shareDescriptors(65_536, { portal: true, metrics: true });
    expect(budget.api).to.equal(undefined);
    expect(budget.portal).to.deep.equal({ connections: 512, heldRefusals: 256 });
  });

  it('refuses a limit too low to serve, saying what to raise', function () {
    expect(() => shareDescriptors(400, { apiMaxConnections: 4_096, portal: true, metrics: true })).to.throw('the process may open only 400 files, too few to serve beside its 256 kept for storage and files (raise it: ulimit -n)');
  });

  it('stands by the configured bounds where the limit cannot be read', function () {
    expect(shareDescriptors(null, { apiMaxConnections: 4_096, portal: true, metrics: false })).to.deep.equal({
      limit: null, reserved: RESERVED_DESCRIPTORS, api: { connections: 4_096, heldRefusals: 1_024 }, portal: { connections: 256, heldRefusals: 128 },
    });
  });

  it('reads the soft limit on open files from /proc, and null when unlimited or unreadable', function () {
    const dir = mkdtempSync(join(tmpdir(), 'limits-'));
    const file = (soft: string): string => {
      const path = join(dir, `limits-${soft}`);
      writeFileSync(path, `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                 524288               files\n`);
      return path;
    };
    expect(openFileLimit(file('4096'))).to.equal(4_096);
    expect(openFileLimit(file('unlimited'))).to.equal(null);
    expect(openFileLimit(join(dir, 'missing'))).to.equal(null);
    expect(openFileLimit()).to.be.a('number');
  });
});
