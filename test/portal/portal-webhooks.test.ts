import { expect } from 'chai';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { InviteAdmin } from '../../src/application/admin-sign-in/invite-admin.js';
import { PortalClient, startTestPortal, type PortalResponse, type TestPortal } from '../support/portal-server.js';
import { memoryPortalWorld, type PortalWorld } from '../support/portal-world.js';
import { freePort } from '../support/redis.js';
import { startService } from '../support/service-process.js';

const PASSWORD = 'a long enough passphrase';
const PAGE = '/portal/settings/webhooks';
const SECRET_IN_PAGE = /value="(whsec_[A-Za-z0-9+/=]+)"/;

// The webhooks page over HTTP, on memory storage (where the portal is the only way to add an endpoint):
// what a browser test cannot easily send, forged and cross-partner forms, and where a secret may travel.
describe('the portal\'s webhooks page over HTTP', function () {
  this.timeout(30_000);
  let world: PortalWorld;
  let portal: TestPortal;

  beforeEach(async function () {
    world = await memoryPortalWorld();
    portal = await startTestPortal(world);
  });
  afterEach(async function () {
    await portal.close();
  });

  async function admin(email: string, partnerId = 'acme'): Promise<PortalClient> {
    const { token } = await new InviteAdmin(world.keys, world.admin.accounts, world.admin.invitations, world.clock).execute({ partnerId, email });
    const client = new PortalClient(portal.url);
    const path = `/portal/invite/${token}`;
    const created = await client.post(path, { csrf: PortalClient.csrfOf(await client.get(path)), password: PASSWORD, confirm: PASSWORD });
    expect(created.status, created.text).to.equal(303);
    return client;
  }
  const csrf = async (client: PortalClient): Promise<string> => PortalClient.csrfOf(await client.get(PAGE));
  const add = async (client: PortalClient, url: string, description = ''): Promise<PortalResponse> =>
    client.post(PAGE, { csrf: await csrf(client), url, description });
  const endpointsOf = async (partnerId: string) => world.webhooks.endpoints.list(partnerId);
  /** Everything an action could change: endpoints with their secrets, waiting deliveries, the audit log. */
  const snapshot = async (): Promise<string> => JSON.stringify({
    endpoints: [...await endpointsOf('acme'), ...await endpointsOf('globex')],
    waiting: await world.webhooks.outbox.pendingCount(),
    audit: [...await world.admin.audit.list('acme', 100), ...await world.admin.audit.list('globex', 100)],
  });

  it('says which endpoint URLs it takes: public https ones, or http and private addresses too where WEBHOOK_ALLOW_PRIVATE_TARGETS allows them', async function () {
    const strict = await (await admin('ada@acme.example')).get(PAGE);
    expect(strict.text).to.include('Endpoints are HTTPS URLs of public hosts; at most 10.')
      .and.include('<p id="endpoint-url-hint">An https URL of your own receiver, without a user name or password in it.</p>');
    await portal.close();
    portal = await startTestPortal(world, { allowPrivateTargets: true });
    const bea = await admin('bea@acme.example');
    const open = await bea.get(PAGE);
    expect(open.text).to.not.include('Endpoints are HTTPS URLs');
    expect(open.text).to.include('Endpoints are HTTPS or plain HTTP URLs, and may name this machine or a private network: this deployment is set up for development or testing. At most 10.')
      .and.include('<p id="endpoint-url-hint">An https or http URL of your own receiver, public or private, without a user name or password in it.</p>');
    // What the page says is what the form takes.
    expect((await add(bea, 'http://127.0.0.1:8080/in')).status).to.equal(303);
    expect((await endpointsOf('acme')).map((e) => e.url)).to.deep.equal(['http://127.0.0.1:8080/in']);
  });

  it('adds an endpoint from the form, lists it with "Never" delivered, and audits webhook.created with the admin\'s email', async function () {
    const ada = await admin('ada@acme.example');
    const empty = await ada.get(PAGE);
    expect(empty.status).to.equal(200);
    expect(empty.text).to.include('<h1>Webhooks</h1>').and.include('<label for="endpoint-url">Endpoint URL</label>')
      .and.include('<label for="endpoint-description">Description</label>').and.include('<button type="submit">Add</button>');
    expect(empty.text).to.include(`<a href="${PAGE}" aria-current="page">Webhooks</a>`);
    const added = await add(ada, 'https://hooks.acme.example/catalog', 'Shop sync');
    expect([added.status, added.location]).to.deep.equal([303, `${PAGE}?notice=added`]);
    const [endpoint] = await endpointsOf('acme');
    expect(endpoint).to.deep.include({ url: 'https://hooks.acme.example/catalog', description: 'Shop sync', status: 'enabled' });
    const listed = await ada.get(added.location!);
    expect(listed.text).to.include('The endpoint is added and enabled.');
    const row = /<tr>\s*<td id="endpoint-[^"]+">[\s\S]*?<\/tr>/.exec(listed.text)?.[0] ?? '';
    expect(row).to.include('<code>https://hooks.acme.example/catalog</code>').and.include('Shop sync').and.include('enabled').and.include('Never');
    for (const button of ['Send test event', 'Reveal secret', 'Rotate secret', 'Disable', 'Delete']) expect(row).to.include(`>${button}</button>`);
    expect(listed.text).to.not.include(endpoint!.secrets.current.slice(6));
    const events = (await world.admin.audit.list('acme', 10)).map((e) => [e.action, e.adminEmail, e.endpointId]);
    expect(events).to.deep.equal([['webhook.created', 'ada@acme.example', endpoint!.id], ['admin.signed_in', 'ada@acme.example', undefined]]);
  });

  it('shows a refused URL\'s reason on the form, keeps what was typed, and adds nothing', async function () {
    const ada = await admin('ada@acme.example');
    const refusals: [string, string][] = [
      ['ftp://x', 'webhook URL refused: the scheme is ftp; only https is allowed'],
      ['https://user:pw@example.com/', 'webhook URL refused: it holds credentials (a user name or a password before the host); give a URL without them'],
      ['http://127.0.0.1:9/in', 'webhook URL refused: the scheme is http; only https is allowed'],
    ];
    for (const [url, reason] of refusals) {
      const refused = await add(ada, url, 'mine');
      expect(refused.status, url).to.equal(400);
      expect(refused.text, url).to.include(`<p class="message" role="alert">${reason}</p>`);
      expect(refused.text).to.include('value="mine"');
    }
    expect(await endpointsOf('acme')).to.deep.equal([]);
    expect(await world.admin.audit.list('acme', 10)).to.satisfy((events: { action: string }[]) => events.every((e) => !e.action.startsWith('webhook.')));
  });

  it('refuses every webhooks form without the session\'s CSRF token with 403, changing nothing', async function () {
    const ada = await admin('ada@acme.example');
    const bea = await admin('bea@acme.example');
    expect((await add(ada, 'https://hooks.acme.example/in')).status).to.equal(303);
    const [endpoint] = await endpointsOf('acme');
    const own = await csrf(ada);
    expect((await ada.post(`${PAGE}/${endpoint!.id}/test`, { csrf: own })).status).to.equal(303);
    const messageId = (await world.webhooks.outbox.claimDue(new Date(world.clock.now()), 10, 1))[0]!.message.id;
    const before = await snapshot();
    const beaToken = await csrf(bea);
    const forms = [PAGE, ...['test', 'secret', 'rotate', 'disable', 'enable', 'delete', `messages/${messageId}/resend`].map((action) => `${PAGE}/${endpoint!.id}/${action}`)];
    for (const path of forms) {
      for (const fields of [{}, { csrf: '' }, { csrf: beaToken }]) {
        const refused = await ada.post(path, { ...fields, url: 'https://hooks.acme.example/forged' });
        expect([refused.status, refused.setCookies], `${path} ${JSON.stringify(fields)}`).to.deep.equal([403, []]);
      }
    }
    expect(await snapshot()).to.equal(before);
  });

  it('answers another partner\'s endpoint as a missing one, 404, on every action, changing nothing', async function () {
    const ada = await admin('ada@acme.example');
    const gus = await admin('gus@globex.example', 'globex');
    await add(ada, 'https://hooks.acme.example/in');
    await add(gus, 'https://hooks.globex.example/in');
    const [acme] = await endpointsOf('acme');
    const [globex] = await endpointsOf('globex');
    await ada.post(`${PAGE}/${acme!.id}/test`, { csrf: await csrf(ada) });
    const acmeMessage = (await world.webhooks.outbox.claimDue(new Date(world.clock.now()), 10, 1))[0]!.message.id;
    const before = await snapshot();
    const token = await csrf(gus);
    for (const endpointId of [acme!.id, 'whep_ffffffffffffffff']) {
      for (const action of ['test', 'secret', 'rotate', 'disable', 'enable', 'delete', `messages/${acmeMessage}/resend`]) {
        const refused = await gus.post(`${PAGE}/${endpointId}/${action}`, { csrf: token });
        expect(refused.status, `${endpointId} ${action}`).to.equal(404);
        expect(refused.text).to.include('<h1>Endpoint not found</h1>');
        expect(refused.setCookies, 'no secret handed over').to.deep.equal([]);
      }
      expect((await gus.get(`${PAGE}/${endpointId}/delete`)).status).to.equal(404);
    }
    // Its own endpoint, another partner's message: not found either.
    const resent = await gus.post(`${PAGE}/${globex!.id}/messages/${acmeMessage}/resend`, { csrf: token });
    expect(resent.status).to.equal(404);
    expect(resent.text).to.include('<h1>Message not found</h1>');
    expect(await snapshot()).to.equal(before);
    const page = (await gus.get(PAGE)).text;
    expect(page).to.not.include(acme!.id).and.not.include('hooks.acme.example');
  });

  it('reveals a secret on the one page load after its POST, to its own session only, never in an address or the log', async function () {
    const ada = await admin('ada@acme.example');
    await add(ada, 'https://hooks.acme.example/in');
    const [endpoint] = await endpointsOf('acme');
    const secret = endpoint!.secrets.current;
    const revealed = await ada.post(`${PAGE}/${endpoint!.id}/secret`, { csrf: await csrf(ada) });
    expect([revealed.status, revealed.location]).to.deep.equal([303, PAGE]);
    expect(revealed.text + revealed.setCookies.join('')).to.not.include(secret.slice(6));
    const sealed = revealed.setCookies.find((c) => c.startsWith('pcat_portal_webhook_secret='));
    expect(sealed).to.match(/; Path=\/portal\/settings\/webhooks; HttpOnly; SameSite=Strict; Max-Age=60$/);

    // Another session given the same cookie opens nothing.
    const bea = await admin('bea@acme.example');
    bea.jar.set('pcat_portal_webhook_secret', ada.jar.get('pcat_portal_webhook_secret')!);
    expect((await bea.get(PAGE)).text).to.not.include(secret.slice(6));

    const shown = await ada.get(PAGE);
    expect(SECRET_IN_PAGE.exec(shown.text)?.[1]).to.equal(secret);
    expect(shown.text).to.include('<label for="webhook-secret">Signing secret</label>');
    expect((await ada.get(PAGE)).text).to.not.include(secret.slice(6));
    expect(portal.logs.join('\n')).to.not.include(secret.slice(6));
    expect(JSON.stringify(await world.admin.audit.list('acme', 100))).to.not.include(secret.slice(6));
  });

  it('asks before deleting, and deletes on the confirmation, auditing webhook.deleted', async function () {
    const ada = await admin('ada@acme.example');
    await add(ada, 'https://hooks.acme.example/in');
    const [endpoint] = await endpointsOf('acme');
    const confirm = await ada.get(`${PAGE}/${endpoint!.id}/delete`);
    expect(confirm.status).to.equal(200);
    expect(confirm.text).to.include('<h1>Delete endpoint</h1>').and.include('>Delete endpoint</button>');
    const deleted = await ada.post(`${PAGE}/${endpoint!.id}/delete`, { csrf: PortalClient.csrfOf(confirm) });
    expect([deleted.status, deleted.location]).to.deep.equal([303, `${PAGE}?notice=deleted`]);
    expect(await endpointsOf('acme')).to.deep.equal([]);
    expect((await world.admin.audit.list('acme', 10)).map((e) => e.action).slice(0, 2)).to.deep.equal(['webhook.deleted', 'webhook.created']);
  });
});

// `npm start` without a database: the process holds the endpoints and delivers, and no CLI can reach
// them, so the portal is the only way in. Its own delivery loop posts the test event.
describe('the portal\'s webhooks page on memory storage, in the service\'s own process (npm start)', function () {
  this.timeout(120_000);

  it('adds an endpoint whose test event the process itself delivers, signed with the revealed secret', async function () {
    const arrivals: { headers: Record<string, string>; body: string }[] = [];
    const receiver = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        arrivals.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`;
    const service = startService({ STORAGE: 'memory', PORTAL_PORT: String(await freePort()), WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    try {
      const [invite] = await service.waitFor(/http:\/\/127\.0\.0\.1:\d+\/portal\/invite\/\S+/, 60_000);
      const url = new URL(invite);
      const client = new PortalClient(url.origin);
      const accepted = await client.post(url.pathname, { csrf: PortalClient.csrfOf(await client.get(url.pathname)), password: PASSWORD, confirm: PASSWORD });
      expect(accepted.status, accepted.text).to.equal(303);
      const csrf = PortalClient.csrfOf(await client.get(PAGE));
      expect((await client.post(PAGE, { csrf, url: receiverUrl, description: 'memory' })).location).to.equal(`${PAGE}?notice=added`);
      const endpointId = /Id <code>(whep_[0-9a-f]{16})<\/code>/.exec((await client.get(PAGE)).text)?.[1];
      expect(endpointId).to.be.a('string');
      expect((await client.post(`${PAGE}/${endpointId!}/secret`, { csrf })).status).to.equal(303);
      const secret = SECRET_IN_PAGE.exec((await client.get(PAGE)).text)?.[1];
      expect(secret).to.match(/^whsec_/);
      expect((await client.post(`${PAGE}/${endpointId!}/test`, { csrf })).location).to.equal(`${PAGE}?notice=test-sent`);

      // Until it arrives and its attempt is logged; the bound only keeps a broken run from hanging.
      let page = '';
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
        page = (await client.get(PAGE)).text;
        if (page.includes('delivered (HTTP 204)')) break;
      }
      expect(arrivals).to.have.length(1);
      expect(new Webhook(secret!).verify(arrivals[0]!.body, arrivals[0]!.headers)).to.deep.include({ type: 'webhook.test', data: { endpoint_id: endpointId } });
      const messageId = arrivals[0]!.headers['webhook-id']!;
      expect(page).to.include(`<code>${messageId}</code>`).and.include('delivered (HTTP 204)');

      // Resent: the log numbers its attempt on from the first, and marks it a resend.
      expect((await client.post(`${PAGE}/${endpointId!}/messages/${messageId}/resend`, { csrf })).location).to.equal(`${PAGE}?notice=resent`);
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
        page = (await client.get(PAGE)).text;
        if (page.split('delivered (HTTP 204)').length === 4) break; // the last delivery's cell, and two log rows
      }
      expect(arrivals.map((arrival) => arrival.headers['webhook-id'])).to.deep.equal([messageId, messageId]);
      const attemptCells = [...page.matchAll(/<td id="attempt-[^"]+">[\s\S]*?<\/td>\s*<td>([\s\S]*?)<\/td>/g)].map((match) => match[1]);
      expect(attemptCells, 'newest first').to.deep.equal(['2<br><small>resend</small>', '1']);
      expect(service.stdout() + service.stderr()).to.not.include(secret!.slice(6));
    } finally {
      service.kill();
      await service.exited();
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
