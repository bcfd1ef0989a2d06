import { expect } from 'chai';
import { connect } from 'node:net';
import { AcceptInvitation } from '../../src/application/admin-sign-in/accept-invitation.js';
import { InviteAdmin } from '../../src/application/admin-sign-in/invite-admin.js';
import { IssueApiKey } from '../../src/application/keys/issue-api-key.js';
import type { ApiKeyRecord } from '../../src/application/keys/api-key-admin.js';
import { AddWebhookEndpoint } from '../../src/application/webhooks/add-webhook-endpoint.js';
import { MemoryWebhookEndpoints } from '../../src/adapters/memory/memory-webhook-endpoints.js';
import { PasswordHashGate } from '../../src/application/admin-sign-in/password-hash-gate.js';
import { INVITATION_LIFETIME_MS, SIGN_IN_BUSY_RETRY_AFTER_SECONDS } from '../../src/domain/admin.js';
import { hashApiKey, principalOf } from '../../src/domain/api-key.js';
import { PortalClient, startTestPortal, type PortalResponse, type TestPortal } from '../support/portal-server.js';
import { memoryPortalWorld, type PortalWorld } from '../support/portal-world.js';

const PASSWORD = 'a long enough passphrase';
const KEYS_PAGE = '/portal/settings/api-keys';
const KEY_IN_PAGE = /value="(pcat_live_[A-Za-z0-9]{40})"/;
const TEST_KEY_IN_PAGE = /value="(pcat_test_[A-Za-z0-9]{40})"/;
/** The row of the keys table naming the key id, its cells' text without tags. */
const rowOf = (page: PortalResponse, keyId: string): string[] | undefined => page.text.split('<tr>').find((row) => row.includes(`<code>${keyId}</code>`))
  ?.split('</td>').slice(0, -1).map((cell) => cell.replace(/<[^>]*>/g, '').trim());

describe('the partner portal over HTTP', function () {
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

  const invite = async (email: string, partnerId = 'acme'): Promise<string> =>
    (await new InviteAdmin(world.keys, world.admin.accounts, world.admin.invitations, world.clock).execute({ partnerId, email })).token;

  /** A browser that accepted an invitation: signed in, on the keys page. */
  async function admin(email: string, partnerId = 'acme'): Promise<PortalClient> {
    const client = new PortalClient(portal.url);
    const path = `/portal/invite/${await invite(email, partnerId)}`;
    const form = await client.get(path);
    expect(form.status).to.equal(200);
    const created = await client.post(path, { csrf: PortalClient.csrfOf(form), password: PASSWORD, confirm: PASSWORD });
    expect(created.status, created.text).to.equal(303);
    expect(created.location).to.equal(KEYS_PAGE);
    return client;
  }

  const keyIds = async (partnerId = 'acme'): Promise<string[]> => (await world.keys.list(partnerId)).filter((k) => k.revokedAt === null).map((k) => k.id);
  /** Acme's keys, revoked ones too, that are not among `before`: the fixture's keys aside. */
  const keysSince = async (before: readonly ApiKeyRecord[]): Promise<ApiKeyRecord[]> =>
    (await world.keys.list('acme')).filter((k) => !before.some((old) => old.id === k.id));

  it('serves the sign-in page with the fields and button named as specified, a tight CSP, no-store, and a strict form cookie', async function () {
    const page = await new PortalClient(portal.url).get('/portal/login');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).to.equal("default-src 'none';style-src 'self';script-src 'self';img-src 'self';form-action 'self';frame-ancestors 'none';base-uri 'none'");
    expect(page.headers.get('cache-control')).to.equal('no-store');
    expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
    expect(page.setCookies).to.have.length(1);
    expect(page.setCookies[0]).to.match(/^pcat_portal_form=[A-Za-z0-9_-]{43}; Path=\/portal; HttpOnly; SameSite=Strict$/);
    expect(page.text).to.include('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(page.text).to.include('<label for="email">Email</label>');
    expect(page.text).to.include('<label for="password">Password</label>');
    expect(page.text).to.include('<button type="submit">Sign in</button>');
    expect(page.text).to.not.match(/<script>|style="/);
  });

  it('sets the session cookie HttpOnly, SameSite=Strict, Path=/portal, and Secure when configured for TLS', async function () {
    await portal.close();
    portal = await startTestPortal(world, { secureCookies: true });
    await admin('ada@acme.example');
    const signIn = new PortalClient(portal.url);
    const form = await signIn.get('/portal/login');
    expect(form.setCookies[0]).to.match(/; Secure$/);
    const done = await signIn.post('/portal/login', { csrf: PortalClient.csrfOf(form), email: 'ada@acme.example', password: PASSWORD });
    expect(done.status).to.equal(303);
    expect(done.setCookies.find((c) => c.startsWith('pcat_portal_session='))).to.match(/^pcat_portal_session=[A-Za-z0-9_-]{43}; Path=\/portal; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
  });

  it('refuses a POST without the CSRF token, or with another session\'s, with 403, changing nothing', async function () {
    const ada = await admin('ada@acme.example');
    const bea = await admin('bea@acme.example');
    const before = await keyIds();
    const beaToken = PortalClient.csrfOf(await bea.get(KEYS_PAGE));
    for (const fields of [{ label: 'no token' }, { label: 'wrong token', csrf: beaToken }, { label: 'empty', csrf: '' }]) {
      const refused = await ada.post(KEYS_PAGE, fields);
      expect(refused.status, JSON.stringify(fields)).to.equal(403);
      expect(refused.setCookies).to.deep.equal([]);
    }
    const [victim] = before;
    expect((await ada.post(`${KEYS_PAGE}/${victim}/revoke`, { csrf: beaToken })).status).to.equal(403);
    expect((await ada.post(`${KEYS_PAGE}/${victim}/replace`, {})).status).to.equal(403);
    expect((await ada.post('/portal/logout', { csrf: beaToken })).status).to.equal(403);
    expect(await keyIds()).to.deep.equal(before);
    expect((await ada.get(KEYS_PAGE)).status).to.equal(200);
    // And with its own token the same form works.
    const adaToken = PortalClient.csrfOf(await ada.get(KEYS_PAGE));
    expect((await ada.post(KEYS_PAGE, { csrf: adaToken, label: 'fine' })).status).to.equal(303);
    expect(await keyIds()).to.have.length(before.length + 1);
  });

  it('refuses the sign-in form without the token of its own form cookie', async function () {
    await admin('ada@acme.example');
    const client = new PortalClient(portal.url);
    const form = await client.get('/portal/login');
    const stranger = new PortalClient(portal.url);
    const refused = await stranger.post('/portal/login', { csrf: PortalClient.csrfOf(form), email: 'ada@acme.example', password: PASSWORD });
    expect(refused.status).to.equal(403);
    expect(refused.setCookies).to.deep.equal([]);
  });

  it('shows the endpoint a webhook action was about in the audit log, with no secret', async function () {
    const endpoints = new MemoryWebhookEndpoints(world.store);
    const { endpoint, secret } = await new AddWebhookEndpoint(endpoints, world.admin.audit, world.clock, { allowPrivateTargets: false })
      .execute({ partnerId: 'acme', url: 'https://hooks.acme.example/in', description: null, actor: null });
    const page = await (await admin('ada@acme.example')).get('/portal/settings/audit-log');
    expect(page.status).to.equal(200);
    expect(page.text).to.include('<th scope="col">Key or endpoint</th>');
    expect(page.text).to.include(`<td><code>webhook.created</code></td><td><code>${endpoint.id}</code></td>`);
    expect(page.text).to.not.include(secret.slice('whsec_'.length, 20));
  });

  it('answers another partner\'s key id exactly as a missing one: 404, and the key keeps working', async function () {
    const { issued } = await new IssueApiKey(world.keys, world.announcer, world.admin.audit, world.clock).execute({ partnerId: 'globex', mode: 'live', label: 'theirs', actor: null });
    const ada = await admin('ada@acme.example');
    const csrf = PortalClient.csrfOf(await ada.get(KEYS_PAGE));
    const missing = await ada.get(`${KEYS_PAGE}/acme-nonexistent/revoke`);
    const theirs = await ada.get(`${KEYS_PAGE}/${issued.id}/revoke`);
    expect([missing.status, theirs.status]).to.deep.equal([404, 404]);
    expect(theirs.text.replaceAll(issued.id, 'ID')).to.equal(missing.text.replaceAll('acme-nonexistent', 'ID'));
    expect((await ada.post(`${KEYS_PAGE}/${issued.id}/revoke`, { csrf })).status).to.equal(404);
    expect((await ada.post(`${KEYS_PAGE}/${issued.id}/replace`, { csrf })).status).to.equal(404);
    expect(await world.store.findActiveByHash(hashApiKey(issued.key))).to.deep.equal(principalOf(issued.id, 'globex', 'live'));
    expect((await ada.get(KEYS_PAGE)).text).to.not.include(issued.id);
  });

  it('answers a wrong email and a wrong password alike, and locks the email at the sixth attempt', async function () {
    await admin('ada@acme.example');
    const client = new PortalClient(portal.url);
    const attempt = async (email: string, password: string): Promise<PortalResponse> => {
      const form = await client.get('/portal/login');
      return client.post('/portal/login', { csrf: PortalClient.csrfOf(form), email, password });
    };
    const unknown = await attempt('nobody@acme.example', PASSWORD);
    expect(unknown.status).to.equal(401);
    expect(unknown.text).to.include('Email or password is incorrect.');
    for (let i = 1; i <= 5; i += 1) {
      const wrong = await attempt('ada@acme.example', `wrong password ${i}`);
      expect(wrong.status, `attempt ${i}`).to.equal(401);
      expect(wrong.text.replace('ada@acme.example', 'EMAIL')).to.equal(unknown.text.replace('nobody@acme.example', 'EMAIL'));
    }
    const sixth = await attempt('ada@acme.example', PASSWORD);
    expect(sixth.status).to.equal(429);
    expect(sixth.text).to.include('Too many failed sign-ins for this email. Try again in 15 minutes.');
    expect(sixth.setCookies.filter((c) => c.startsWith('pcat_portal_session'))).to.deep.equal([]);
  });

  it('refuses an invitation used once already, or expired, with 410, creating no account', async function () {
    const client = new PortalClient(portal.url);
    const token = await invite('ada@acme.example');
    const path = `/portal/invite/${token}`;
    const form = await client.get(path);
    expect(form.text).to.include('<label for="password">Password</label>');
    expect(form.text).to.include('<label for="confirm">Confirm password</label>');
    expect(form.text).to.include('<button type="submit">Create account</button>');
    const short = await client.post(path, { csrf: PortalClient.csrfOf(form), password: 'too short', confirm: 'too short' });
    expect(short.status).to.equal(400);
    expect(short.text).to.include('at least 12 characters');
    expect((await client.post(path, { csrf: PortalClient.csrfOf(form), password: PASSWORD, confirm: PASSWORD })).status).to.equal(303);
    const again = new PortalClient(portal.url);
    expect((await again.get(path)).status).to.equal(410);
    const reused = await again.post(path, { csrf: PortalClient.csrfOf(await again.get('/portal/login')), password: PASSWORD, confirm: PASSWORD });
    expect(reused.status).to.equal(410);

    const late = `/portal/invite/${await invite('bea@acme.example')}`;
    const lateForm = await again.get(late);
    world.clock.advance(INVITATION_LIFETIME_MS);
    expect((await again.get(late)).status).to.equal(410);
    expect((await again.post(late, { csrf: PortalClient.csrfOf(lateForm), password: PASSWORD, confirm: PASSWORD })).status).to.equal(410);
    expect(await world.admin.accounts.findByEmail('bea@acme.example')).to.equal(null);
    expect((await again.get('/portal/invite/made-up-token')).status).to.equal(410);
  });

  it('answers an invitation accepted while the hash gate is full 503 with Retry-After, as a busy sign-in, its form shown again and still good after', async function () {
    const gate = new PasswordHashGate({ concurrent: 1, maxWaiting: 0, maxWaitMs: 10_000 });
    let release = (): void => undefined;
    const holding = gate.run(() => new Promise<void>((resolve) => { release = resolve; }));
    const { invitations, accounts, sessions, audit } = world.admin;
    await portal.close();
    portal = await startTestPortal(world, { useCases: { acceptInvitation: new AcceptInvitation(invitations, accounts, sessions, audit, world.clock, gate) } });
    const client = new PortalClient(portal.url);
    const path = `/portal/invite/${await invite('ada@acme.example')}`;
    const form = await client.get(path);
    const busy = await client.post(path, { csrf: PortalClient.csrfOf(form), password: PASSWORD, confirm: PASSWORD });
    expect([busy.status, busy.headers.get('retry-after')]).to.deep.equal([503, String(SIGN_IN_BUSY_RETRY_AFTER_SECONDS)]);
    expect(busy.text).to.include('Signing in is busy. Try again in a few seconds.');
    expect(busy.text).to.include('<button type="submit">Create account</button>');
    release();
    await holding;
    expect((await client.post(path, { csrf: PortalClient.csrfOf(busy), password: PASSWORD, confirm: PASSWORD })).status).to.equal(303);
  });

  it('ends the session at sign-out: its cookie opens no page and changes nothing', async function () {
    const ada = await admin('ada@acme.example');
    const page = await ada.get(KEYS_PAGE);
    const csrf = PortalClient.csrfOf(page);
    const cookie = ada.jar.get('pcat_portal_session')!;
    const out = await ada.post('/portal/logout', { csrf });
    expect([out.status, out.location]).to.deep.equal([303, '/portal/login']);
    expect(out.setCookies.some((c) => /^pcat_portal_session=; Path=\/portal; HttpOnly; SameSite=Strict; Max-Age=0/.test(c))).to.equal(true);
    const replay = new PortalClient(portal.url);
    replay.jar.set('pcat_portal_session', cookie);
    const gone = await replay.get(KEYS_PAGE);
    expect([gone.status, gone.location]).to.deep.equal([302, '/portal/login']);
    const before = await keyIds();
    expect((await replay.post(KEYS_PAGE, { csrf, label: 'after sign-out' })).status).to.equal(403);
    expect(await keyIds()).to.deep.equal(before);
  });

  it('shows a new key on exactly one page load after its POST, to its own session only, and never writes it to the log', async function () {
    const ada = await admin('ada@acme.example');
    const csrf = PortalClient.csrfOf(await ada.get(KEYS_PAGE));
    const created = await ada.post(KEYS_PAGE, { csrf, label: 'Shop', mode: 'live' });
    expect([created.status, created.location]).to.deep.equal([303, KEYS_PAGE]);
    expect(created.text).to.not.match(KEY_IN_PAGE);
    const sealed = ada.jar.get('pcat_portal_new_key')!;
    const shown = await ada.get(KEYS_PAGE);
    const key = KEY_IN_PAGE.exec(shown.text)?.[1];
    expect(key).to.be.a('string');
    expect(shown.text).to.include('<label for="new-key">New API key</label>');
    expect(shown.text).to.include('It cannot be shown again.');
    expect(shown.text).to.include('Mode: <strong>live</strong>. Reads your catalog.');
    expect(await world.store.findActiveByHash(hashApiKey(key!))).to.not.equal(null);
    // Reloading shows the table, not the key.
    const reload = await ada.get(KEYS_PAGE);
    expect(reload.text).to.not.include(key!);
    expect(reload.text).to.include('Shop');
    // The sealed cookie, replayed by another session, opens nothing.
    const bea = await admin('bea@acme.example');
    bea.jar.set('pcat_portal_new_key', sealed);
    expect((await bea.get(KEYS_PAGE)).text).to.not.include(key!);
    // Replayed in its own session within its minute, it shows the key; past its minute, nothing.
    ada.jar.set('pcat_portal_new_key', sealed);
    expect((await ada.get(KEYS_PAGE)).text).to.include(key!);
    world.clock.advance(61_000);
    ada.jar.set('pcat_portal_new_key', sealed);
    const late = await ada.get(KEYS_PAGE);
    expect(late.status).to.equal(200);
    expect(late.text).to.not.include(key!);
    for (const line of portal.logs) {
      expect(line).to.not.include(key!.slice(10));
      expect(line).to.not.include(hashApiKey(key!));
      expect(line).to.not.include(PASSWORD);
    }
    expect(portal.logs.some((l) => l.includes('"route":"/portal/invite/:token"'))).to.equal(true);
    expect(portal.logs.every((l) => !/\/portal\/invite\/[A-Za-z0-9_-]{43}/.test(l))).to.equal(true);
  });

  it('creates, shows once, replaces and revokes a test key as a live one, each listed with mode test', async function () {
    const ada = await admin('ada@acme.example');
    const form = await ada.get(`${KEYS_PAGE}/new`);
    expect(form.text).to.include('<legend>Mode</legend>');
    expect(form.text).to.include('<input id="mode-live" name="mode" type="radio" value="live" checked aria-describedby="mode-live-hint">');
    expect(form.text).to.include('<input id="mode-test" name="mode" type="radio" value="test" aria-describedby="mode-test-hint">');
    const csrf = PortalClient.csrfOf(form);
    const before = await world.keys.list('acme');
    const created = await ada.post(KEYS_PAGE, { csrf, label: 'Sandbox tryout', mode: 'test' });
    expect([created.status, created.location]).to.deep.equal([303, KEYS_PAGE]);

    const shown = await ada.get(KEYS_PAGE);
    const key = TEST_KEY_IN_PAGE.exec(shown.text)?.[1];
    expect(key, 'a pcat_test_ key on the page').to.be.a('string');
    expect(shown.text).to.include('Mode: <strong>test</strong>. Reads your sandbox catalog only, never live data');
    expect(shown.text).to.not.match(KEY_IN_PAGE);
    const [record, ...others] = await keysSince(before);
    expect(others).to.deep.equal([]);
    expect(record).to.include({ mode: 'test', label: 'Sandbox tryout' });
    expect(record!.id).to.match(/^acme-test-[0-9a-f]+$/);
    const principal = await world.store.findActiveByHash(hashApiKey(key!));
    expect(principal, 'reads the sandbox').to.deep.equal(principalOf(record!.id, 'acme', 'test'));
    expect(principal!.catalogId).to.not.equal('acme');
    const reload = await ada.get(KEYS_PAGE);
    expect(reload.text).to.not.include(key!);
    expect(reload.text).to.include('<th scope="col">Mode</th>');
    expect(rowOf(reload, record!.id)?.slice(0, 2)).to.deep.equal([`Sandbox tryout ${record!.id}`, 'test']);

    const replaced = await ada.post(`${KEYS_PAGE}/${record!.id}/replace`, { csrf });
    expect([replaced.status, replaced.location]).to.deep.equal([303, KEYS_PAGE]);
    const replacement = await ada.get(KEYS_PAGE);
    const second = TEST_KEY_IN_PAGE.exec(replacement.text)?.[1];
    expect(second, 'a pcat_test_ key replaces a test key').to.be.a('string').and.not.equal(key);
    expect(replacement.text).to.include('Mode: <strong>test</strong>.');
    expect(await world.store.findActiveByHash(hashApiKey(key!))).to.equal(null);
    const next = (await keysSince(before)).find((k) => k.id !== record!.id);
    expect(next).to.include({ mode: 'test', revokedAt: null });
    expect(await world.store.findActiveByHash(hashApiKey(second!))).to.include({ keyId: next!.id, mode: 'test' });
    const listed = await ada.get(KEYS_PAGE);
    const modeAndStatus = (page: PortalResponse, keyId: string): (string | undefined)[] => {
      const cells = rowOf(page, keyId);
      return [cells?.[1], cells?.[4]];
    };
    expect(modeAndStatus(listed, record!.id)).to.deep.equal(['test', 'revoked']);
    expect(modeAndStatus(listed, next!.id)).to.deep.equal(['test', 'active']);

    expect((await ada.post(`${KEYS_PAGE}/${next!.id}/revoke`, { csrf })).status).to.equal(303);
    expect(await world.store.findActiveByHash(hashApiKey(second!))).to.equal(null);
    expect(modeAndStatus(await ada.get(KEYS_PAGE), next!.id)).to.deep.equal(['test', 'revoked']);
  });

  it('refuses a mode other than live or test with 400 and the form again, creating nothing; a form without one makes a live key', async function () {
    const ada = await admin('ada@acme.example');
    const csrf = PortalClient.csrfOf(await ada.get(KEYS_PAGE));
    const before = await world.keys.list('acme');
    for (const mode of ['', 'Test', 'LIVE', 'test ', 'sandbox', '__proto__', 'live,test']) {
      const refused = await ada.post(KEYS_PAGE, { csrf, label: 'Kept <label>', mode });
      expect(refused.status, JSON.stringify(mode)).to.equal(400);
      expect(refused.text).to.include('<p class="message" role="alert">Choose the mode of the key: Live or Test.</p>');
      expect(refused.text, 'the label typed, escaped').to.include('value="Kept &lt;label&gt;"');
      expect(refused.text).to.include('value="live" checked');
      expect(refused.setCookies.filter((c) => c.startsWith('pcat_portal_new_key'))).to.deep.equal([]);
      expect(refused.text).to.not.match(/pcat_(live|test)_[A-Za-z0-9]{40}/);
    }
    expect(await keysSince(before)).to.deep.equal([]);
    expect((await ada.send('POST', KEYS_PAGE, `csrf=${csrf}&mode=test&mode=live`, { 'Content-Type': 'application/x-www-form-urlencoded' })).status, 'the field twice').to.equal(400);
    expect(await keysSince(before)).to.deep.equal([]);

    // A refused label keeps the mode chosen.
    const long = await ada.post(KEYS_PAGE, { csrf, label: 'x'.repeat(300), mode: 'test' });
    expect(long.status).to.equal(400);
    expect(long.text).to.include('value="test" checked');
    expect(await keysSince(before)).to.deep.equal([]);

    expect((await ada.post(KEYS_PAGE, { csrf, label: 'no mode field' })).status).to.equal(303);
    expect(KEY_IN_PAGE.test((await ada.get(KEYS_PAGE)).text)).to.equal(true);
    expect((await keysSince(before)).map((k) => k.mode)).to.deep.equal(['live']);
  });

  it('takes a sign-in form abandoned part-way as the client\'s doing: no error in the log', async function () {
    const { port } = new URL(portal.url);
    for (let i = 0; i < 5; i += 1) {
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(`POST /portal/login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 500\r\n\r\nemail=a`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(portal.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 40)).to.deep.equal([]);
    expect(portal.logs.filter((line) => line.includes('"route":"/portal/login"') && line.includes('"status":400'))).to.have.length(5);
  });

  it('answers ?notice= naming an object property (__proto__, constructor, toString) with the page and no notice, and logs no error', async function () {
    const ada = await admin('ada@acme.example');
    for (const notice of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const page = await ada.get(`${KEYS_PAGE}?notice=${notice}`);
      expect(page.status, notice).to.equal(200);
      expect(page.text).to.not.include('class="notice"');
    }
    expect((await ada.get(`${KEYS_PAGE}?notice=revoked`)).text).to.include('The key is revoked');
    expect(portal.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 40)).to.deep.equal([]);
  });

  it('sends helmet\'s page headers with the portal\'s policy on a page, a redirect and a refusal alike, and no others', async function () {
    const expected = {
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none';style-src 'self';script-src 'self';img-src 'self';form-action 'self';frame-ancestors 'none';base-uri 'none'",
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
      'origin-agent-cluster': '?1',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
    };
    const client = new PortalClient(portal.url);
    const answers = [await client.get('/portal/login'), await client.get(KEYS_PAGE), await client.post('/portal/login', { email: 'x', password: 'y' }), await client.send('DELETE', '/portal/login')];
    expect(answers.map((answer) => answer.status)).to.deep.equal([200, 302, 403, 405]);
    const notSecurity = new Set(['date', 'connection', 'keep-alive', 'content-type', 'content-length', 'set-cookie', 'location', 'allow', 'x-request-id']);
    for (const answer of answers) {
      expect(Object.fromEntries([...answer.headers].filter(([name]) => !notSecurity.has(name))), String(answer.status)).to.deep.equal(expected);
    }
  });

  it('sends HSTS for a year when cookies are secure (the portal is behind TLS), and none otherwise', async function () {
    expect((await new PortalClient(portal.url).get('/portal/login')).headers.get('strict-transport-security')).to.equal(null);
    await portal.close();
    portal = await startTestPortal(world, { secureCookies: true });
    expect((await new PortalClient(portal.url).get('/portal/login')).headers.get('strict-transport-security')).to.equal('max-age=31536000');
  });

  it('refuses a form with bytes that are not UTF-8, or a field sent twice, with 400 naming it, and writes nothing', async function () {
    const ada = await admin('ada@acme.example');
    const csrf = PortalClient.csrfOf(await ada.get(KEYS_PAGE));
    const before = await keyIds();
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const refused = async (body: string | Buffer, says: string): Promise<void> => {
      const answer = await ada.send('POST', KEYS_PAGE, body, form);
      expect(answer.status, String(body)).to.equal(400);
      expect(answer.text).to.include(says);
    };
    await refused(`csrf=${csrf}&label=a&label=b`, 'The form has the field &quot;label&quot; more than once.');
    await refused(`csrf=${csrf}&label=caf%E9`, 'The form&#39;s field &quot;label&quot; is not valid URL-encoded UTF-8.');
    await refused(Buffer.concat([Buffer.from(`csrf=${csrf}&label=caf`), Buffer.from([0xe9])]), 'The form is not valid UTF-8.');
    expect(await keyIds()).to.deep.equal(before);
    expect((await ada.send('POST', KEYS_PAGE, `csrf=${csrf}&label=caf%C3%A9+cr%C3%A8me`, form)).status, 'UTF-8, percent-encoded, with + for spaces').to.equal(303);
    expect(await keyIds()).to.have.length(before.length + 1);
  });

  it('refuses a form body over 8 KiB with 413, and one that is not urlencoded with 415', async function () {
    const ada = await admin('ada@acme.example');
    const csrf = PortalClient.csrfOf(await ada.get(KEYS_PAGE));
    const before = await keyIds();
    expect((await ada.post(KEYS_PAGE, { csrf, label: 'x'.repeat(9_000) })).status).to.equal(413);
    expect((await ada.send('POST', KEYS_PAGE, JSON.stringify({ csrf, label: 'json' }), { 'Content-Type': 'application/json' })).status).to.equal(415);
    expect(await keyIds()).to.deep.equal(before);
  });
});
