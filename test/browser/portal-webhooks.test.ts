import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { HttpWebhookSender } from '../../src/adapters/webhooks/http-webhook-sender.js';
import { InviteAdmin } from '../../src/application/admin-sign-in/invite-admin.js';
import { DeliverWebhooks } from '../../src/application/webhooks/deliver-webhooks.js';
import { acceptInvitation, launchChromium, recordPages } from '../support/chromium.js';
import { startTestPortal, type TestPortal } from '../support/portal-server.js';
import { memoryPortalWorld, type PortalWorld } from '../support/portal-world.js';

const PASSWORD = 'correct horse battery staple';
const PAGE = '/portal/settings/webhooks';
/** `UPDATE_SCREENSHOTS=1` writes the README's picture of the page. */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';

interface Arrival {
  readonly headers: Record<string, string>;
  readonly body: string;
}

// Memory storage, as `npm start` runs without a database: the portal is the only way to add an
// endpoint there. A real receiver on loopback (WEBHOOK_ALLOW_PRIVATE_TARGETS=true), the delivery
// worker run step by step, and every message verified by the official Standard Webhooks library.
describe('the portal\'s webhooks page in headless Chromium', function () {
  this.timeout(90_000);
  let browser: Browser | undefined;
  let world: PortalWorld;
  let portal: TestPortal | undefined;
  let receiver: Server | undefined;
  let receiverUrl: string;
  const arrivals: Arrival[] = [];
  let worker: DeliverWebhooks;

  before(async function () {
    browser = await launchChromium(this);
    // Today's time: the receiver's library refuses a signature more than five minutes off its clock.
    world = await memoryPortalWorld({ startsAt: Date.now() });
    portal = await startTestPortal(world, { allowPrivateTargets: true });
    receiver = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        arrivals.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/catalog`;
    const timeoutMs = 5_000;
    worker = new DeliverWebhooks(
      world.webhooks.outbox, world.webhooks.endpoints, world.admin.audit,
      // What WEBHOOK_ALLOW_PRIVATE_TARGETS=true gives the service's sender: http, and any address.
      new HttpWebhookSender({ timeoutMs, allowHttp: true, allowsAddress: () => true }),
      world.clock, { concurrency: 4, perEndpoint: 4, perPartner: 2, attemptTimeoutMs: timeoutMs, retrySchedule: [5] },
    );
  });
  after(async function () {
    await browser?.close();
    await portal?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => (receiver === undefined ? resolve(undefined) : receiver.close(resolve)));
  });

  /** One step of the delivery worker, waited out: whatever is due is attempted and recorded. */
  async function deliver(): Promise<number> {
    const started = await worker.poll();
    await worker.settled();
    return started;
  }

  async function signedIn(email: string, partnerId: string): Promise<Page> {
    const { token } = await new InviteAdmin(world.keys, world.admin.accounts, world.admin.invitations, world.clock).execute({ partnerId, email });
    const page = await (await browser!.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
    await acceptInvitation(page, `${portal!.url}/portal/invite/${token}`, PASSWORD);
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByRole('heading', { name: 'Webhooks', exact: true }).waitFor();
    return page;
  }

  const verifiedBy = (secret: string, arrival: Arrival): unknown => new Webhook(secret).verify(arrival.body, arrival.headers);

  it('add (refused URLs shown), reveal, test, resend, rotate, disable, enable, delete; each action audited; another partner gets 404', async function () {
    const page = await signedIn('ada@acme.example', 'acme');
    const recorded = recordPages(page);
    const { documents } = recorded;
    const addForm = page.getByRole('region', { name: 'Add endpoint', exact: true });

    // Refused URLs: the use case's reason on the form, nothing added.
    for (const [url, reason] of [
      ['ftp://x', 'webhook URL refused: the scheme is ftp; only https or http is allowed'],
      ['https://user:pw@example.com/', 'webhook URL refused: it holds credentials (a user name or a password before the host); give a URL without them'],
    ]) {
      await addForm.getByLabel('Endpoint URL', { exact: true }).fill(url!);
      await addForm.getByRole('button', { name: 'Add', exact: true }).click();
      expect((await page.getByRole('alert').textContent())?.trim(), url).to.equal(reason);
      expect(await page.getByText('This partner has no webhook endpoints yet.').isVisible()).to.equal(true);
    }
    expect(await world.webhooks.endpoints.list('acme')).to.deep.equal([]);

    await addForm.getByLabel('Endpoint URL', { exact: true }).fill(receiverUrl);
    await addForm.getByLabel('Description', { exact: true }).fill('Test receiver');
    await addForm.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'The endpoint is added and enabled.' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: receiverUrl }).filter({ has: page.getByRole('button', { name: 'Send test event', exact: true }) });
    const rowText = async (): Promise<string> => (await row.innerText()).replace(/\s+/g, ' ');
    expect(await rowText()).to.include('Test receiver').and.include('enabled').and.include('Never');
    const endpointId = /Id (whep_[0-9a-f]{16})/.exec(await rowText())![1]!;

    // The secret: behind a POST, on that one page load.
    const reveal = async (): Promise<string> => {
      await row.getByRole('button', { name: 'Reveal secret', exact: true }).click();
      const secret = await page.getByRole('textbox', { name: 'Signing secret', exact: true }).inputValue();
      expect(new URL(page.url()).pathname + new URL(page.url()).search).to.equal(PAGE);
      // The page that revealed it is read before the reload replaces it.
      await recorded.settled();
      await page.reload();
      expect(await page.getByRole('textbox', { name: 'Signing secret' }).count()).to.equal(0);
      return secret;
    };
    const secret = await reveal();
    expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);

    // A test event reaches the receiver, signed so the library verifies it, and shows in the log.
    await row.getByRole('button', { name: 'Send test event', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'A test event is on its way' }).waitFor();
    expect(await deliver()).to.equal(1);
    expect(arrivals).to.have.length(1);
    expect(verifiedBy(secret, arrivals[0]!)).to.deep.include({ type: 'webhook.test', data: { endpoint_id: endpointId } });
    const messageId = arrivals[0]!.headers['webhook-id']!;
    await page.reload();
    expect(await rowText()).to.include('delivered (HTTP 204)');
    const log = page.getByRole('region', { name: `Delivery log of ${receiverUrl}`, exact: true });
    const logRows = async (): Promise<string[]> => (await log.getByRole('row').allInnerTexts()).slice(1).map((text) => text.replace(/\s+/g, ' ').trim());
    expect(await logRows()).to.have.length(1);
    expect((await logRows())[0]).to.match(new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC webhook\\.test ${messageId} 1 delivered \\(HTTP 204\\) \\d+ ms Resend$`));

    // Resend: the same message again, the same webhook-id.
    await log.getByRole('row').filter({ hasText: messageId }).getByRole('button', { name: 'Resend', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'The message is on its way again' }).waitFor();
    expect(await deliver()).to.equal(1);
    expect(arrivals).to.have.length(2);
    expect(arrivals[1]!.headers['webhook-id']).to.equal(messageId);
    expect(arrivals[1]!.body).to.equal(arrivals[0]!.body);
    expect(verifiedBy(secret, arrivals[1]!)).to.deep.include({ type: 'webhook.test' });
    await page.reload();
    // The resend's attempt is the message's second, and says it is a resend.
    expect((await logRows()).map((text) => /webhook\.test (msg_\S+) (\d+)( resend)? delivered/.exec(text)?.slice(1))).to.deep.equal([
      [messageId, '2', ' resend'], [messageId, '1', undefined],
    ]);
    expect(await log.getByRole('button', { name: 'Resend', exact: true }).count(), 'one Resend per message').to.equal(1);

    // Rotate: the next message carries the new secret's signature first and the old one's beside it.
    await row.getByRole('button', { name: 'Rotate secret', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'A new signing secret is in use.' }).waitFor();
    const rotated = await reveal();
    expect(rotated).to.match(/^whsec_/).and.not.equal(secret);
    await row.getByRole('button', { name: 'Send test event', exact: true }).click();
    expect(await deliver()).to.equal(1);
    const signed = arrivals[2]!;
    const [newer, older] = signed.headers['webhook-signature']!.split(' ');
    expect(older, 'two signatures').to.be.a('string');
    expect(verifiedBy(rotated, { ...signed, headers: { ...signed.headers, 'webhook-signature': newer! } })).to.deep.include({ type: 'webhook.test' });
    expect(verifiedBy(secret, { ...signed, headers: { ...signed.headers, 'webhook-signature': older! } })).to.deep.include({ type: 'webhook.test' });
    expect(() => verifiedBy(secret, { ...signed, headers: { ...signed.headers, 'webhook-signature': newer! } })).to.throw();

    // Disable, then enable: the row says which, and offers the other.
    await row.getByRole('button', { name: 'Disable', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'The endpoint is disabled' }).waitFor();
    expect(await rowText()).to.include('disabled');
    expect(await row.getByRole('button', { name: 'Disable', exact: true }).count()).to.equal(0);
    await row.getByRole('button', { name: 'Enable', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'The endpoint is enabled.' }).waitFor();
    expect(await rowText()).to.include('enabled');
    await shoot(page);

    // Another partner's admin: every action on this endpoint is answered as a missing endpoint's.
    const gus = await signedIn('gus@globex.example', 'globex');
    expect(await gus.getByText('This partner has no webhook endpoints yet.').isVisible()).to.equal(true);
    const csrf = (await gus.locator('input[name="csrf"]').first().getAttribute('value'))!;
    for (const action of ['test', 'secret', 'rotate', 'disable', 'enable', 'delete', `messages/${messageId}/resend`]) {
      const answer = await gus.context().request.post(`${portal!.url}${PAGE}/${endpointId}/${action}`, { form: { csrf }, maxRedirects: 0 });
      expect(answer.status(), action).to.equal(404);
      expect(await answer.text()).to.include('Endpoint not found').and.not.include(secret.slice(6)).and.not.include(rotated.slice(6));
    }
    const confirmation = await gus.goto(`${portal!.url}${PAGE}/${endpointId}/delete`);
    expect(confirmation?.status()).to.equal(404);
    await gus.getByRole('heading', { name: 'Endpoint not found', exact: true }).waitFor();
    expect((await world.webhooks.endpoints.find(endpointId))?.secrets.current).to.equal(rotated);
    expect(arrivals).to.have.length(3);
    expect(await deliver()).to.equal(0);

    // Delete, after a confirmation.
    await row.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('heading', { name: 'Delete endpoint', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Delete endpoint', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'The endpoint is deleted.' }).waitFor();
    expect(await page.getByText('This partner has no webhook endpoints yet.').isVisible()).to.equal(true);

    // The audit log names each change, by this admin, with the endpoint; no secret anywhere in it.
    await page.getByRole('link', { name: 'Audit log', exact: true }).click();
    await page.getByRole('heading', { name: 'Audit log', exact: true }).waitFor();
    const events = (await page.getByRole('row').allInnerTexts()).slice(1).map((text) => text.replace(/\s+/g, ' ').trim()).filter((text) => text.includes('webhook.'));
    expect(events.map((text) => /(webhook\.\w+)/.exec(text)?.[1])).to.deep.equal(['webhook.deleted', 'webhook.enabled', 'webhook.disabled', 'webhook.secret_rotated', 'webhook.created']);
    for (const event of events) expect(event).to.include('ada@acme.example').and.include(endpointId);

    // Each secret arrived in exactly the page load that revealed it; none is in the portal's log.
    await recorded.settled();
    await page.close();
    expect(documents.filter((text) => text.includes(secret.slice(6)))).to.have.length(1);
    expect(documents.filter((text) => text.includes(rotated.slice(6)))).to.have.length(1);
    expect(portal!.logs.join('\n')).to.not.include(secret.slice(6)).and.not.include(rotated.slice(6));
  });

  async function shoot(page: Page): Promise<void> {
    if (SCREENSHOTS) await page.screenshot({ path: 'docs/portal-webhooks.png', fullPage: true });
  }
});
