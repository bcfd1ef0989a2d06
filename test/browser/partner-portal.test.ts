import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { alwaysReady } from '../../src/adapters/memory/always-ready.js';
import { MemoryRateLimiter } from '../../src/adapters/memory/memory-rate-limiter.js';
import { InviteAdmin } from '../../src/application/admin-sign-in/invite-admin.js';
import { acceptInvitation, launchChromium, recordPages } from '../support/chromium.js';
import { memoryPortalWorld, type PortalWorld } from '../support/portal-world.js';
import { startTestPortal, type TestPortal } from '../support/portal-server.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const PASSWORD = 'correct horse battery staple';
/** `UPDATE_SCREENSHOTS=1` writes the README's pictures of the pages, from this throwaway world's keys. */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';

describe('the partner portal in headless Chromium', function () {
  this.timeout(90_000);
  let browser: Browser | undefined;
  let world: PortalWorld;
  let portal: TestPortal | undefined;
  let api: TestServer | undefined;

  before(async function () {
    browser = await launchChromium(this);
    // One memory store behind both listeners, as `npm start` runs them.
    world = await memoryPortalWorld();
    portal = await startTestPortal(world);
    api = await startTestServer({
      catalog: world.store, changes: world.store, keys: world.store, limiter: new MemoryRateLimiter({ limit: 100, clock: world.clock }), readiness: alwaysReady, keyUsage: portal.usage,
    });
  });
  after(async function () {
    await browser?.close();
    await portal?.close();
    await api?.close();
  });

  const status = async (key: string): Promise<number> =>
    (await api!.request('/api/v1/public/sku/TENT-2P', { headers: { Authorization: `Bearer ${key}` } })).status;

  async function shoot(page: Page, name: string): Promise<void> {
    if (SCREENSHOTS) await page.screenshot({ path: `docs/portal-${name}.png`, fullPage: true });
  }

  it('invitation, account, create, use, replace, revoke, audit log, sign out: each key shown on exactly one page load', async function () {
    const { token } = await new InviteAdmin(world.keys, world.admin.accounts, world.admin.invitations, world.clock).execute({ partnerId: 'acme', email: 'ada@acme.example' });
    const page = await browser!.newPage({ viewport: { width: 1000, height: 700 } });
    const recorded = recordPages(page);
    const { documents } = recorded;

    await acceptInvitation(page, `${portal!.url}/portal/invite/${token}`, PASSWORD);

    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    await page.getByLabel('Label', { exact: true }).fill('Shop backend');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const shown = page.getByRole('textbox', { name: 'New API key', exact: true });
    const first = await shown.inputValue();
    expect(first).to.match(/^pcat_live_[A-Za-z0-9]{40}$/);
    expect(await page.getByText('It cannot be shown again.').isVisible()).to.equal(true);
    expect(await status(first)).to.equal(200);
    await shoot(page, 'api-keys');

    const firstRow = page.getByRole('row').filter({ hasText: 'Shop backend' });
    const firstId = (await firstRow.locator('code').textContent())!;
    // Each page showing a key is read before the next one replaces it.
    await recorded.settled();
    await firstRow.getByRole('button', { name: 'Replace', exact: true }).click();
    const second = await page.getByRole('textbox', { name: 'New API key', exact: true }).inputValue();
    expect(second).to.match(/^pcat_live_[A-Za-z0-9]{40}$/).and.not.equal(first);
    expect(await status(first)).to.equal(401);
    expect(await status(second)).to.equal(200);

    // The reload shows the table, not the key.
    await recorded.settled();
    await page.reload();
    expect(await page.getByRole('textbox', { name: 'New API key' }).count()).to.equal(0);
    const secondRow = page.getByRole('row').filter({ hasText: 'Shop backend' }).filter({ has: page.getByRole('button', { name: 'Revoke', exact: true }) });
    const secondId = (await secondRow.locator('code').textContent())!;
    expect(await page.getByRole('row').filter({ hasText: firstId }).textContent()).to.include('revoked');
    await secondRow.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByRole('heading', { name: 'Revoke key', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Revoke key', exact: true }).click();
    await page.getByRole('heading', { name: 'API keys', exact: true }).waitFor();
    expect(await status(second)).to.equal(401);
    expect(await page.getByRole('row').filter({ hasText: secondId }).textContent()).to.include('revoked');

    await page.getByRole('link', { name: 'Audit log', exact: true }).click();
    await page.getByRole('heading', { name: 'Audit log', exact: true }).waitFor();
    const rows = await page.getByRole('row').allTextContents();
    const events = rows.slice(1).map((row) => row.replace(/\s+/g, ' ').trim());
    expect(events.map((row) => /(key\.(?:created|revoked|replaced)|admin\.(?:signed_in|sign_in_failed))/.exec(row)?.[1])).to.deep.equal(['key.revoked', 'key.created', 'key.replaced', 'key.created', 'admin.signed_in']);
    expect(events[0]).to.include(secondId).and.include('ada@acme.example');
    expect(events[2]).to.include(firstId);
    await shoot(page, 'audit-log');

    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await page.goto(`${portal!.url}/portal/settings/api-keys`);
    expect(new URL(page.url()).pathname).to.equal('/portal/login');
    await page.getByLabel('Email', { exact: true }).fill('ada@acme.example');
    await shoot(page, 'login');

    // Each key's text arrived in exactly one page; no page ever held a key's hash.
    await recorded.settled();
    await page.close();
    expect(documents.filter((html) => html.includes(first))).to.have.length(1);
    expect(documents.filter((html) => html.includes(second))).to.have.length(1);
    expect(documents.filter((html) => /pcat_live_[A-Za-z0-9]{40}/.test(html))).to.have.length(2);
  });

  it('creates a test key through the form: Live is checked first, Test chosen, the key shown once and listed with mode test', async function () {
    const { token } = await new InviteAdmin(world.keys, world.admin.accounts, world.admin.invitations, world.clock).execute({ partnerId: 'acme', email: 'tess@acme.example' });
    const page = await browser!.newPage({ viewport: { width: 1000, height: 700 } });
    const recorded = recordPages(page);

    await acceptInvitation(page, `${portal!.url}/portal/invite/${token}`, PASSWORD);

    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    await page.getByRole('heading', { name: 'Create key', exact: true }).waitFor();
    const modes = page.getByRole('group', { name: 'Mode', exact: true });
    expect(await modes.getByRole('radio', { name: 'Live', exact: true }).isChecked()).to.equal(true);
    await page.getByLabel('Label', { exact: true }).fill('Sandbox tryout');
    await modes.getByRole('radio', { name: 'Test', exact: true }).check();
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const key = await page.getByRole('textbox', { name: 'New API key', exact: true }).inputValue();
    expect(key).to.match(/^pcat_test_[A-Za-z0-9]{40}$/);
    expect(await page.getByRole('region', { name: 'Your new key' }).textContent()).to.include('Mode: test.');

    expect(await page.getByRole('columnheader').allTextContents()).to.deep.equal(['Label', 'Mode', 'Created', 'Last used', 'Status', 'Actions']);
    const modeCell = (): Promise<string | undefined> =>
      page.getByRole('row').filter({ hasText: 'Sandbox tryout' }).getByRole('cell').nth(1).textContent().then((text) => text?.trim());
    expect(await modeCell()).to.equal('test');

    // The reload shows the table, mode and all, without the key.
    await recorded.settled();
    await page.reload();
    await page.getByRole('heading', { name: 'API keys', exact: true }).waitFor();
    expect(await page.getByRole('textbox', { name: 'New API key' }).count()).to.equal(0);
    expect(await modeCell()).to.equal('test');
    await recorded.settled();
    await page.close();
    expect(recorded.documents.filter((html) => html.includes(key))).to.have.length(1);
  });
});
