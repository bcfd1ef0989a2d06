import { expect } from 'chai';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MysqlChangesFeed } from '../src/adapters/mysql/mysql-changes-feed.js';
import { MysqlCursorKeys } from '../src/adapters/mysql/mysql-cursor-keys.js';
import { MysqlWebhookEndpoints } from '../src/adapters/mysql/mysql-webhook-endpoints.js';
import { MysqlWebhookOutbox } from '../src/adapters/mysql/mysql-webhook-outbox.js';
import { ReadChanges } from '../src/application/changes/read-changes.js';
import type { CatalogChangedMessage } from '../src/domain/webhook-messages.js';
import { signingSecrets } from '../src/domain/webhook-endpoint.js';
import { webhookBody, webhookTestMessage } from '../src/domain/webhook-messages.js';
import { newWebhookMessageId, signWebhook } from '../src/domain/webhook-signature.js';
import { fixtureCatalog } from './fixtures/catalog-fixture.js';
import { cli as runCli, type CliRun } from './support/cli-process.js';
import { catalogDocument, importCatalog } from './support/import.js';
import { useTestDatabase } from './support/mariadb.js';
import type { CliScript } from './support/script-command.js';

interface AddedJson { id: string; partner: string; url: string; description: string | null; secret: string; created_at: string }
interface ListedJson { id: string; url: string; description: string | null; status: string; created_at: string }

// Production's CLI (compiled, from dist/) runs every case; the demo's (tsx) runs the same code,
// which operator CLI's own tests compare script by script, so one case here proves its wiring.
describe('webhooks commands (npm run cli:prod; npm run cli once)', function () {
  this.timeout(120_000);
  const testDb = useTestDatabase();
  let env: Record<string, string>;
  const cli = (args: readonly string[], extra: Record<string, string> = {}, script: CliScript = 'cli:prod'): Promise<CliRun> =>
    runCli(args, { ...env, ...extra }, script);
  const add = async (url: string, partner = 'acme'): Promise<AddedJson> => {
    const run = await cli(['webhooks', 'add', '--partner', partner, '--url', url, '--json']);
    expect(run.code, run.stderr).to.equal(0);
    return run.json() as AddedJson;
  };
  const list = async (partner = 'acme'): Promise<ListedJson[]> => (await cli(['webhooks', 'list', '--partner', partner, '--json'])).json() as ListedJson[];
  /** A message signed as delivery will sign it now, with the secrets stored for the endpoint. */
  const signedNow = async (endpointId: string): Promise<{ body: string; headers: Record<string, string> }> => {
    const endpoint = (await new MysqlWebhookEndpoints(testDb.db).find(endpointId))!;
    const body = webhookBody(webhookTestMessage({ at: new Date(), endpointId }));
    const headers = signWebhook({ messageId: newWebhookMessageId(), timestampSeconds: Math.floor(Date.now() / 1000), body, secrets: signingSecrets(endpoint.secrets, new Date()) });
    return { body, headers: { ...headers } };
  };

  before(async function () {
    env = { DATABASE_URL: testDb.url };
    await importCatalog(testDb.db, fixtureCatalog());
  });
  beforeEach(async function () {
    await testDb.db.deleteFrom('webhook_endpoints').execute();
    await testDb.db.deleteFrom('audit_events').execute();
  });

  it('adds an endpoint, printing its id, partner, URL, description, secret and time; lists it without the secret; shows the same secret again', async function () {
    const run = await cli(['webhooks', 'add', '--partner', 'acme', '--url', 'https://hooks.acme.example/catalog', '--description', 'Shop sync', '--json']);
    expect(run.code, run.stderr).to.equal(0);
    const added = run.json() as AddedJson;
    expect(Object.keys(added)).to.deep.equal(['id', 'partner', 'url', 'description', 'secret', 'created_at']);
    expect(added).to.include({ partner: 'acme', url: 'https://hooks.acme.example/catalog', description: 'Shop sync' });
    expect(added.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(new Date(added.created_at).toISOString()).to.equal(added.created_at);

    const listed = await cli(['webhooks', 'list', '--partner', 'acme', '--json']);
    expect(listed.json()).to.deep.equal([{ id: added.id, url: added.url, description: 'Shop sync', status: 'enabled', created_at: added.created_at }]);
    expect(listed.stdout).to.not.include(added.secret.slice(6));

    const secret = await cli(['webhooks', 'secret', added.id, '--json']);
    expect(secret.json()).to.deep.equal({ id: added.id, secret: added.secret });
    const { body, headers } = await signedNow(added.id);
    expect(new Webhook(added.secret).verify(body, headers)).to.deep.equal(JSON.parse(body));
  });

  it('prints text without --json, the secret on a line of its own (npm run cli, under tsx)', async function () {
    const run = await cli(['webhooks', 'add', '--partner', 'acme', '--url', 'https://hooks.acme.example/in'], {}, 'cli');
    expect(run.code, run.stderr).to.equal(0);
    const id = /^added webhook endpoint (whep_[0-9a-f]{16}) for partner acme: https:\/\/hooks\.acme\.example\/in\n/.exec(run.stdout)?.[1];
    expect(id, run.stdout).to.be.a('string');
    const secret = run.stdout.trimEnd().split('\n').at(-1)!;
    expect(secret).to.match(/^whsec_/);
    expect((await cli(['webhooks', 'secret', id!], {}, 'cli')).stdout).to.equal(`${secret}\n`);
    expect((await cli(['webhooks', 'list', '--partner', 'acme'], {}, 'cli')).stdout).to.match(new RegExp(`^${id!}\\tenabled\\thttps://hooks\\.acme\\.example/in\\t-\\tcreated \\S+\\n$`));
  });

  it('rotates: prints the new secret, and for 24 hours messages verify with the new secret and with the old one', async function () {
    const added = await add('https://hooks.acme.example/in');
    const run = await cli(['webhooks', 'rotate', added.id, '--json']);
    expect(run.code, run.stderr).to.equal(0);
    const rotated = run.json() as { id: string; secret: string };
    expect(Object.keys(rotated)).to.deep.equal(['id', 'secret']);
    expect(rotated.id).to.equal(added.id);
    expect(rotated.secret).to.match(/^whsec_/).and.not.equal(added.secret);
    expect((await cli(['webhooks', 'secret', added.id, '--json'])).json()).to.deep.equal(rotated);
    const { body, headers } = await signedNow(added.id);
    expect(headers['webhook-signature']!.split(' ')).to.have.length(2);
    expect(new Webhook(rotated.secret).verify(body, headers)).to.deep.equal(JSON.parse(body));
    expect(new Webhook(added.secret).verify(body, headers)).to.deep.equal(JSON.parse(body));
  });

  it('disables, enables and removes, each in the audit log with the endpoint and no secret', async function () {
    const added = await add('https://hooks.acme.example/in');
    const disabled = await cli(['webhooks', 'disable', added.id, '--json']);
    expect([disabled.code, disabled.json()]).to.deep.equal([0, { id: added.id, status: 'disabled' }]);
    expect((await list())[0]?.status).to.equal('disabled');
    const enabled = await cli(['webhooks', 'enable', added.id]);
    expect([enabled.code, enabled.stdout]).to.deep.equal([0, `webhook endpoint ${added.id} is enabled\n`]);
    expect((await list())[0]?.status).to.equal('enabled');
    await cli(['webhooks', 'rotate', added.id]);
    const removed = await cli(['webhooks', 'remove', added.id, '--json']);
    expect([removed.code, removed.json()]).to.deep.equal([0, { id: added.id, removed: true }]);
    expect(await list()).to.deep.equal([]);
    const events = (await sql<{ action: string; endpoint_id: string; admin_email: string | null }>`select action, endpoint_id, admin_email from audit_events order by id`.execute(testDb.db)).rows;
    expect(events).to.deep.equal(['webhook.created', 'webhook.disabled', 'webhook.enabled', 'webhook.secret_rotated', 'webhook.deleted']
      .map((action) => ({ action, endpoint_id: added.id, admin_email: null })));
    expect(JSON.stringify((await sql`select * from audit_events`.execute(testDb.db)).rows)).to.not.include(added.secret.slice(6));
  });

  it('refuses a URL with exit 1 naming the reason, storing nothing; WEBHOOK_ALLOW_PRIVATE_TARGETS=true takes http and private addresses', async function () {
    const refusals: [string, string][] = [
      ['https://127.0.0.1/in', 'error: webhook URL refused: 127.0.0.1 is a loopback address; webhooks go to public addresses only\n'],
      ['http://hooks.acme.example/in', 'error: webhook URL refused: the scheme is http; only https is allowed\n'],
      ['https://user:s3cret@hooks.acme.example/in', 'error: webhook URL refused: it holds credentials (a user name or a password before the host); give a URL without them\n'],
      ['https://[::ffff:169.254.169.254]/', 'error: webhook URL refused: ::ffff:a9fe:a9fe (IPv4-mapped 169.254.169.254) is a link-local address; webhooks go to public addresses only\n'],
    ];
    for (const [url, stderr] of refusals) {
      const run = await cli(['webhooks', 'add', '--partner', 'acme', '--url', url, '--json']);
      expect([run.code, run.stdout, run.stderr], url).to.deep.equal([1, '', stderr]);
    }
    expect(await list()).to.deep.equal([]);
    const allowed = await cli(['webhooks', 'add', '--partner', 'acme', '--url', 'http://127.0.0.1:8080/in', '--json'], { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    expect(allowed.code, allowed.stderr).to.equal(0);
    expect((allowed.json() as AddedJson).url).to.equal('http://127.0.0.1:8080/in');
  });

  it('refuses an 11th endpoint for a partner with a clear error', async function () {
    // Ten endpoints already, written directly: ten processes would only make the test slower.
    await sql`insert into webhook_endpoints (id, partner_id, url, status, secret, created_at)
      select concat('whep_seed_', seq), 'acme', concat('https://hooks.acme.example/', seq), 'enabled', 'whsec_AA==', now(3) from seq_1_to_10`.execute(testDb.db);
    const run = await cli(['webhooks', 'add', '--partner', 'acme', '--url', 'https://hooks.acme.example/11']);
    expect([run.code, run.stdout, run.stderr]).to.deep.equal([1, '', 'error: partner acme has 10 webhook endpoints already, the most it may have; remove one first\n']);
    expect(await list()).to.have.length(10);
  });

  it('fails with one clear line for an unknown endpoint or partner', async function () {
    for (const command of ['secret', 'rotate', 'enable', 'disable', 'remove']) {
      const run = await cli(['webhooks', command, 'whep_nope']);
      expect([run.code, run.stdout, run.stderr], command).to.deep.equal([1, '', 'error: no webhook endpoint with id "whep_nope"\n']);
    }
    const unknown = await cli(['webhooks', 'list', '--partner', 'nobody']);
    expect([unknown.code, unknown.stderr]).to.deep.equal([1, 'error: no partner with id "nobody"; import its catalog first\n']);
  });

  it('an import from the CLI queues one catalog.changed message to each enabled endpoint, its cursor one the feed takes', async function () {
    const enabled = await add('https://hooks.acme.example/a');
    const disabled = await add('https://hooks.acme.example/b');
    expect((await cli(['webhooks', 'disable', disabled.id])).code).to.equal(0);
    const catalog = fixtureCatalog();
    const acme = catalog.partners.find((partner) => partner.id === 'acme')!;
    const changed = { ...catalog, partners: catalog.partners.map((partner) => partner !== acme ? partner : { ...partner, products: partner.products.map((product, i) => i === 0 ? { ...product, title: 'Changed by the CLI' } : product) }) };
    const dir = await mkdtemp(join(tmpdir(), 'pcat-webhooks-'));
    try {
      const file = join(dir, 'catalog.json');
      await writeFile(file, JSON.stringify(catalogDocument(changed)));
      const run = await cli(['import', file]);
      expect(run.code, run.stderr).to.equal(0);
      const claimed = await new MysqlWebhookOutbox(testDb.db).claimDue(new Date(Date.now() + 1_000), 10, 60_000);
      expect(claimed.map((c) => c.endpoint.id)).to.deep.equal([enabled.id]);
      const body = JSON.parse(claimed[0]!.message.body) as CatalogChangedMessage;
      expect(body.data).to.include({ changes: 1, upserted: 1, deleted: 0 });
      const read = await new ReadChanges(new MysqlChangesFeed(testDb.db), new MysqlCursorKeys(testDb.db), { now: () => Date.now() })
        .execute({ partnerId: 'acme', cursor: body.data.cursor, limit: '10' });
      expect(read.changes.map((change) => change.sku)).to.deep.equal([acme.products[0]!.sku]);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await importCatalog(testDb.db, fixtureCatalog());
      await testDb.db.deleteFrom('webhook_messages').execute();
    }
  });

  it('resends a message to an endpoint of its partner: due again at once, with the same id; refuses an unknown or foreign message with exit 1', async function () {
    const added = await add('https://hooks.acme.example/in');
    const globex = await add('https://hooks.globex.example/in', 'globex');
    const sent = (await cli(['webhooks', 'test', added.id, '--json'])).json() as { id: string; message_id: string };
    const foreign = (await cli(['webhooks', 'test', globex.id, '--json'])).json() as { id: string; message_id: string };
    const outbox = new MysqlWebhookOutbox(testDb.db);
    try {
      // Delivered once, as an instance would record it: nothing is due after that.
      const due = (): Promise<[string, string, number][]> => outbox.claimDue(new Date(Date.now() + 1_000), 10, 60_000)
        .then((claimed) => claimed.map((c) => [c.message.id, c.endpoint.id, c.attempts]));
      const [first] = await outbox.claimDue(new Date(Date.now() + 1_000), 10, 60_000).then((claimed) => claimed.filter((c) => c.endpoint.id === added.id));
      expect(await outbox.recordAttempt(first!.deliveryId, first!.claimToken, { at: new Date(), status: 204, error: null, durationMs: 5, excerpt: '' }, { state: 'delivered' })).to.equal(true);
      expect(await due()).to.deep.equal([]);

      const run = await cli(['webhooks', 'resend', added.id, sent.message_id, '--json']);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.json()).to.deep.equal({ id: added.id, message_id: sent.message_id });
      expect(Object.keys(run.json() as object)).to.deep.equal(['id', 'message_id']);
      expect(await due()).to.deep.equal([[sent.message_id, added.id, 0]]);

      const text = await cli(['webhooks', 'resend', added.id, sent.message_id], {}, 'cli');
      expect([text.code, text.stdout]).to.deep.equal([0,
        `queued message ${sent.message_id} again for webhook endpoint ${added.id}; a running instance posts it (webhooks deliveries ${added.id} shows the attempt)\n`]);

      for (const messageId of ['msg_nope', foreign.message_id]) {
        const refused = await cli(['webhooks', 'resend', added.id, messageId]);
        expect([refused.code, refused.stdout, refused.stderr], messageId).to.deep.equal([1, '', `error: no webhook message with id "${messageId}" for webhook endpoint "${added.id}"\n`]);
      }
      const unknown = await cli(['webhooks', 'resend', 'whep_nope', sent.message_id]);
      expect([unknown.code, unknown.stdout, unknown.stderr]).to.deep.equal([1, '', 'error: no webhook endpoint with id "whep_nope"\n']);
      const audited = (await sql<{ action: string }>`select action from audit_events order by id`.execute(testDb.db)).rows.map((row) => row.action);
      expect(audited, 'a resend is not an audit event').to.deep.equal(['webhook.created', 'webhook.created']);

      // The resend's attempt is the message's second at the endpoint, and says it is a resend.
      // Past the lease of the claims `due` made above.
      const [again] = await outbox.claimDue(new Date(Date.now() + 120_000), 10, 60_000).then((claimed) => claimed.filter((c) => c.endpoint.id === added.id));
      expect(await outbox.recordAttempt(again!.deliveryId, again!.claimToken, { at: new Date(), status: 204, error: null, durationMs: 5, excerpt: '' }, { state: 'delivered' })).to.equal(true);
      const listed = await cli(['webhooks', 'deliveries', added.id]);
      expect(listed.stdout.split('\n').map((line) => line.split('\t').slice(2, 5))).to.deep.equal([
        [sent.message_id, 'attempt 2 (resend)', '204'], [sent.message_id, 'attempt 1', '204'], [],
      ]);
      const json = (await cli(['webhooks', 'deliveries', added.id, '--json'])).json() as { attempt: number; resend: boolean }[];
      expect(json.map((entry) => [entry.attempt, entry.resend])).to.deep.equal([[2, true], [1, false]]);
    } finally {
      await testDb.db.deleteFrom('webhook_messages').execute();
    }
  });

  it('refuses a malformed command line with exit 2', async function () {
    const noUrl = await cli(['webhooks', 'add', '--partner', 'acme']);
    expect(noUrl.code).to.equal(2);
    expect(noUrl.stderr).to.match(/^error: webhooks add needs --url <url>\n/);
    const noId = await cli(['webhooks', 'rotate']);
    expect([noId.code, noId.stderr.split('\n')[0]]).to.deep.equal([2, 'error: webhooks rotate needs exactly one <endpoint-id>']);
    for (const command of ['test', 'deliveries']) {
      const run = await cli(['webhooks', command]);
      expect([run.code, run.stderr.split('\n')[0]]).to.deep.equal([2, `error: webhooks ${command} needs exactly one <endpoint-id>`]);
    }
    for (const operands of [['whep_0000000000000000'], ['whep_0000000000000000', 'msg_a', 'msg_b']]) {
      const run = await cli(['webhooks', 'resend', ...operands]);
      expect([run.code, run.stderr.split('\n')[0]], operands.join(' ')).to.deep.equal([2, 'error: webhooks resend needs exactly <endpoint-id> <message-id>']);
    }
  });
});
