import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { MysqlApiKeyStore } from '../src/adapters/mysql/mysql-api-key-store.js';
import { hashApiKey, isWellFormedApiKey } from '../src/domain/api-key.js';
import { fixtureDocument } from './fixtures/catalog-fixture.js';
import { catalogWithBom, defectiveCatalogs } from './fixtures/defective-catalogs.js';
import { NO_REDIS_HINT } from '../src/adapters/cli/run-command.js';
import { cli as runCli, type CliRun } from './support/cli-process.js';
import { useTestDatabase } from './support/mariadb.js';
import type { CliScript } from './support/script-command.js';
import { freePort } from './support/redis.js';

interface IssuedJson { id: string; partner: string; mode: 'live' | 'test'; label: string | null; key: string; created_at: string }
interface ListedJson { id: string; mode: 'live' | 'test'; label: string | null; created_at: string; revoked_at: string | null }
/** A key as issued: its mode's prefix, then 40 random base62 characters. */
const ISSUED_KEY = { live: /^pcat_live_[A-Za-z0-9]{40}$/, test: /^pcat_test_[A-Za-z0-9]{40}$/ } as const;
interface ImportJson { products: object; pdp_entries: object }

// Production's CLI (compiled, from dist/). The demo's (tsx) runs the same sources: it is started by
// test/entry-points.test.ts on every Node.js line, and by the webhooks commands' test.
const script: CliScript = 'cli:prod';
describe(`operator CLI (npm run ${script})`, function () {
  this.timeout(60_000);
  const cli = (args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> => runCli(args, env, script);

  it('generates a key and its sha256 without any database', async function () {
    const run = await cli(['keys', 'generate', '--json'], { DATABASE_URL: 'mysql://nobody@127.0.0.1:1/none' });
    expect(run.code).to.equal(0);
    const generated = run.json() as { key: string; sha256: string; mode: string };
    expect(Object.keys(generated)).to.deep.equal(['key', 'sha256', 'mode']);
    expect(generated.key).to.match(ISSUED_KEY.live);
    expect(generated.mode).to.equal('live');
    expect(isWellFormedApiKey(generated.key)).to.equal(true);
    expect(generated.sha256).to.equal(hashApiKey(generated.key));

    const text = await cli(['keys', 'generate']);
    expect([text.code, text.stderr]).to.deep.equal([0, '']);
    expect(text.stdout).to.match(/^key: {4}pcat_live_[A-Za-z0-9]{40}\nsha256: [0-9a-f]{64}\n$/);
  });

  it('generates a test key with --test, and says its catalog file entry needs "mode": "test"', async function () {
    const run = await cli(['keys', 'generate', '--test', '--json'], { DATABASE_URL: 'mysql://nobody@127.0.0.1:1/none' });
    expect([run.code, run.stderr]).to.deep.equal([0, '']);
    const generated = run.json() as { key: string; sha256: string; mode: string };
    expect(Object.keys(generated)).to.deep.equal(['key', 'sha256', 'mode']);
    expect(generated.key).to.match(ISSUED_KEY.test);
    expect(generated.mode).to.equal('test');
    expect(generated.sha256).to.equal(hashApiKey(generated.key));

    const text = await cli(['keys', 'generate', '--test']);
    expect([text.code, text.stderr]).to.deep.equal([0, '']);
    const [keyLine, hashLine, reminder, ...rest] = text.stdout.split('\n');
    expect(keyLine).to.match(/^key: {4}pcat_test_[A-Za-z0-9]{40}$/);
    expect(hashLine).to.equal(`sha256: ${hashApiKey(keyLine!.slice('key:    '.length))}`);
    expect(reminder).to.include('"mode": "test"');
    expect(rest).to.deep.equal(['']);
  });

  it('refuses --test given twice or given a value, and --test on a command that has no test keys, with exit 2 and the usage', async function () {
    for (const [args, message] of [
      [['keys', 'issue', '--partner', 'acme', '--test', '--test'], 'error: keys issue takes --test once; it is given more than once'],
      [['keys', 'generate', '--test', '--test'], 'error: keys generate takes --test once; it is given more than once'],
      [['keys', 'issue', '--partner', 'acme', '--test=x'], "error: Option '--test' does not take an argument"],
      [['keys', 'generate', '--test=yes'], "error: Option '--test' does not take an argument"],
      [['keys', 'list', '--partner', 'acme', '--test'], 'error: keys list takes no --test'],
      [['keys', 'issue', '--partner', 'acme', '--partner', 'globex'], 'error: keys issue takes --partner once; it is given more than once'],
    ] as const) {
      const run = await cli(args);
      expect([run.code, run.stdout, run.stderr.split('\n')[0]], args.join(' ')).to.deep.equal([2, '', message]);
      expect(run.stderr, args.join(' ')).to.include('keys issue --partner <id> [--label <text>] [--test]');
    }
  });

  it('refuses an unknown command with exit 2 and the usage', async function () {
    const run = await cli(['keys', 'rotate']);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.match(/^error: unknown command "keys rotate"/);
    expect(run.stdout).to.equal('');
  });

  it('names DATABASE_URL when a database command has none', async function () {
    const run = await cli(['migrate']);
    expect(run.code).to.equal(1);
    expect(run.stderr).to.equal('error: DATABASE_URL: is required for this command (mysql://user:pass@host:port/db)\n');
  });

  describe('on MySQL', function () {
    const testDb = useTestDatabase({ migrated: false });
    let dir: string;
    let env: Record<string, string>;
    const keyCount = async (): Promise<number> =>
      Number((await testDb.db.selectFrom('api_keys').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

    before(async function () {
      env = { DATABASE_URL: testDb.url };
      dir = await mkdtemp(join(tmpdir(), 'pcat-cli-'));
      await writeFile(join(dir, 'catalog.json'), JSON.stringify(fixtureDocument()));
      const bad = fixtureDocument() as { partners: { id: string; products: { sku: string }[] }[] };
      bad.partners[0]!.id = 'Not A Slug';
      bad.partners[0]!.products[1]!.sku = 'has space';
      await writeFile(join(dir, 'bad.json'), JSON.stringify(bad));
    });
    after(async function () {
      await rm(dir, { recursive: true, force: true });
    });

    it('migrates, and a second run applies nothing', async function () {
      const first = await cli(['migrate', '--json'], env);
      expect(first.code).to.equal(0);
      expect(first.json()).to.deep.equal({ applied: ['0001_initial_schema', '0002_product_lookup_document', '0003_video_search_fields', '0004_identities_and_hashes_only', '0005_changes_feed', '0006_partner_portal', '0007_feed_on_answers', '0008_service_secrets', '0009_admin_records_retention', '0010_webhook_endpoints', '0011_webhook_outbox', '0012_feed_before_signing', '0013_attempts_across_resends', '0014_test_keys', '0015_key_change_sequence', '0016_catalog_source_hash', '0017_webhook_message_traceparent'] });
      expect((await cli(['migrate', '--json'], env)).json()).to.deep.equal({ applied: [] });
    });

    it('refuses a bad catalog file whole, listing every problem by JSON path, and changes nothing', async function () {
      const run = await cli(['import', join(dir, 'bad.json'), '--json'], env);
      expect(run.code).to.equal(1);
      expect(run.stdout).to.equal('');
      expect(run.stderr).to.include('partners[0].id: must be a slug');
      expect(run.stderr).to.include('partners[0].products[1].sku: must be 1 to 50');
      expect(await keyCount()).to.equal(0);
      expect(await testDb.db.selectFrom('products').select('id').execute()).to.deep.equal([]);
    });

    it('imports a catalog and reports counts; a re-import reports it unchanged', async function () {
      const first = await cli(['import', join(dir, 'catalog.json'), '--json'], env);
      expect(first.code, first.stderr).to.equal(0);
      expect((first.json() as ImportJson).products).to.deep.equal({ created: 7, updated: 0, unchanged: 0, deleted: 0 });
      const second = await cli(['import', join(dir, 'catalog.json'), '--json'], env);
      expect((second.json() as ImportJson).pdp_entries).to.deep.equal({ created: 0, updated: 0, unchanged: 7, deleted: 0, regenerated: 0 });
      const text = await cli(['import', join(dir, 'catalog.json'), '--quiet'], env);
      expect(text.stdout.split('\n')).to.include('  pdp_entries: 0 created, 0 updated, 7 unchanged, 0 deleted, 0 regenerated (JSON-LD made anew)');
    });

    it('refuses each file with a defect in its bytes by its place, and writes nothing: no row, no tombstone, no change in the feed', async function () {
      const stored = async (): Promise<unknown> => ({
        products: (await sql<{ partner_id: string }>`select id, partner_id, sku, content_hash from products order by id`.execute(testDb.db)).rows,
        answers: (await sql`select product_id, etag, feed_seq from product_lookups order by product_id`.execute(testDb.db)).rows,
        tombstones: (await sql`select * from product_tombstones`.execute(testDb.db)).rows,
        keys: await keyCount(),
      });
      const before = await stored();
      // The fixture's 7 products; the partners' sandboxes ("~acme") are in the table too, and must not change either.
      expect((before as { products: { partner_id: string }[] }).products.filter((row) => !row.partner_id.startsWith('~'))).to.have.length(7);
      for (const { defect, bytes, problem } of defectiveCatalogs()) {
        await writeFile(join(dir, 'defective.json'), bytes);
        const run = await cli(['import', join(dir, 'defective.json'), '--quiet'], env);
        expect([run.code, run.stdout, run.stderr], defect).to.deep.equal([1, '', `error: catalog refused, 1 problem:\n${problem}\n`]);
        expect(await stored(), defect).to.deep.equal(before);
      }
      await writeFile(join(dir, 'bom.json'), catalogWithBom());
      const bom = await cli(['import', join(dir, 'bom.json'), '--json'], env);
      expect(bom.code, bom.stderr).to.equal(0);
      expect((bom.json() as ImportJson).products).to.deep.equal({ created: 0, updated: 0, unchanged: 7, deleted: 0 });
    });

    it('issues a key shown once, stores only its hash, lists it and revokes it from the next lookup', async function () {
      const issued = await cli(['keys', 'issue', '--partner', 'acme', '--label', 'shop backend', '--json'], env);
      expect(issued.code, issued.stderr).to.equal(0);
      const key = issued.json() as IssuedJson;
      expect(Object.keys(key)).to.deep.equal(['id', 'partner', 'mode', 'label', 'key', 'created_at']);
      expect(key).to.include({ partner: 'acme', mode: 'live', label: 'shop backend' });
      expect(key.key).to.match(ISSUED_KEY.live);
      expect(isWellFormedApiKey(key.key)).to.equal(true);
      expect(new Date(key.created_at).toISOString()).to.equal(key.created_at);

      const store = new MysqlApiKeyStore(testDb.db);
      expect(await store.findActiveByHash(hashApiKey(key.key))).to.deep.equal({ keyId: key.id, partnerId: 'acme', mode: 'live', catalogId: 'acme' });
      const everything = JSON.stringify((await sql`select * from api_keys`.execute(testDb.db)).rows);
      expect(everything).to.not.include(key.key);
      expect(everything).to.not.include(key.key.slice('pcat_live_'.length));

      const listed = await cli(['keys', 'list', '--partner', 'acme', '--json'], env);
      const mine = (listed.json() as ListedJson[]).find((k) => k.id === key.id);
      expect(mine).to.deep.equal({ id: key.id, mode: 'live', label: 'shop backend', created_at: key.created_at, revoked_at: null });
      expect(listed.stdout).to.not.include(key.key);
      expect(listed.stdout).to.not.include(hashApiKey(key.key));
      for (const entry of listed.json() as ListedJson[]) expect(Object.keys(entry)).to.deep.equal(['id', 'mode', 'label', 'created_at', 'revoked_at']);
      const listedText = await cli(['keys', 'list', '--partner', 'acme'], env);
      expect(listedText.stdout.split('\n')).to.include(`${key.id}\tlive\tshop backend\tcreated ${key.created_at}\tactive`);

      const revoked = await cli(['keys', 'revoke', key.id, '--json'], env);
      expect(revoked.code, revoked.stderr).to.equal(0);
      expect(await store.findActiveByHash(hashApiKey(key.key))).to.equal(null);
      const after = ((await cli(['keys', 'list', '--partner', 'acme', '--json'], env)).json() as ListedJson[]).find((k) => k.id === key.id);
      expect(after?.revoked_at).to.equal((revoked.json() as { revoked_at: string }).revoked_at);
    });

    it('issues a test key with --test: pcat_test_ and 40 base62 characters, an id that says test, listed with mode test', async function () {
      const issued = await cli(['keys', 'issue', '--partner', 'acme', '--label', 'ci', '--test', '--json'], env);
      expect(issued.code, issued.stderr).to.equal(0);
      const key = issued.json() as IssuedJson;
      expect(Object.keys(key)).to.deep.equal(['id', 'partner', 'mode', 'label', 'key', 'created_at']);
      expect(key).to.include({ partner: 'acme', mode: 'test', label: 'ci' });
      expect(key.key).to.match(ISSUED_KEY.test);
      expect(key.id).to.match(/^acme-test-[0-9a-f]+$/);
      const store = new MysqlApiKeyStore(testDb.db);
      expect(await store.findActiveByHash(hashApiKey(key.key))).to.deep.include({ keyId: key.id, partnerId: 'acme', mode: 'test' });

      const text = await cli(['keys', 'issue', '--partner', 'acme', '--test'], env);
      expect(text.code, text.stderr).to.equal(0);
      expect(text.stdout).to.match(/^issued test key acme-test-[0-9a-f]+ for partner acme \(reads its sandbox, never live data\); it is shown only now, store it as a secret:\npcat_test_[A-Za-z0-9]{40}\n$/);
      const live = await cli(['keys', 'issue', '--partner', 'acme'], env);
      expect(live.code, live.stderr).to.equal(0);
      expect(live.stdout).to.match(/^issued live key acme-[0-9a-f]+ for partner acme \(reads its live catalog\); it is shown only now, store it as a secret:\npcat_live_[A-Za-z0-9]{40}\n$/);
      const liveId = /^issued live key (\S+) /.exec(live.stdout)![1]!;

      const listed = (await cli(['keys', 'list', '--partner', 'acme', '--json'], env)).json() as ListedJson[];
      expect(listed.find((k) => k.id === key.id)).to.deep.equal({ id: key.id, mode: 'test', label: 'ci', created_at: key.created_at, revoked_at: null });
      expect(listed.find((k) => k.id === liveId)?.mode).to.equal('live');
      const listedText = await cli(['keys', 'list', '--partner', 'acme'], env);
      expect(listedText.stdout.split('\n')).to.include(`${key.id}\ttest\tci\tcreated ${key.created_at}\tactive`);
      expect(listedText.stdout).to.not.include(key.key);
    });

    it('with no Redis set, says after an import or a key change that instances sharing Redis learn of it only through Redis; stdout unchanged', async function () {
      expect(NO_REDIS_HINT).to.match(/^note: .*REDIS_URL.*only through it.*\n$/);
      const issued = await cli(['keys', 'issue', '--partner', 'acme'], env);
      expect([issued.code, issued.stderr]).to.deep.equal([0, NO_REDIS_HINT]);
      expect(issued.stdout).to.match(/^issued live key (\S+) for partner acme \(reads its live catalog\); it is shown only now, store it as a secret:\npcat_live_[A-Za-z0-9]{40}\n$/);
      const id = /^issued live key (\S+) /.exec(issued.stdout)![1]!;
      const revoked = await cli(['keys', 'revoke', id], env);
      expect([revoked.code, revoked.stderr]).to.deep.equal([0, NO_REDIS_HINT]);
      const imported = await cli(['import', join(dir, 'catalog.json')], env);
      expect(imported.code, imported.stderr).to.equal(0);
      expect(imported.stderr.endsWith(`\n${NO_REDIS_HINT}`), imported.stderr).to.equal(true);
      expect(imported.stdout).to.match(/^imported .*catalog\.json\n {2}partners: /);
      // --quiet asks for nothing but the output and failures; a read changes nothing to tell of.
      const quiet = await cli(['import', join(dir, 'catalog.json'), '--quiet'], env);
      const listed = await cli(['keys', 'list', '--partner', 'acme'], env);
      expect([quiet.code, quiet.stderr, listed.code, listed.stderr]).to.deep.equal([0, '', 0, '']);
    });

    it('fails with one clear line for an unknown key or partner', async function () {
      const revoke = await cli(['keys', 'revoke', 'no-such-key'], env);
      expect(revoke.code).to.equal(1);
      expect(revoke.stderr).to.equal('error: no API key with id "no-such-key"\n');
      const issue = await cli(['keys', 'issue', '--partner', 'nobody'], env);
      expect(issue.code).to.equal(1);
      expect(issue.stderr).to.equal('error: no partner with id "nobody"; import its catalog first\n');
    });

    it('invites a partner admin: a one-time portal link valid 72 hours, only its token\'s hash stored, the same use case as the portal', async function () {
      const before = Date.now();
      const run = await cli(['admins', 'invite', '--partner', 'acme', '--email', 'Ada@Acme.example', '--json'], { ...env, PORTAL_PUBLIC_URL: 'https://portal.example/' });
      expect([run.code, run.stderr]).to.deep.equal([0, '']);
      const invited = run.json() as { partner: string; email: string; invite_url: string; expires_at: string };
      expect(Object.keys(invited)).to.deep.equal(['partner', 'email', 'invite_url', 'expires_at']);
      expect(invited).to.include({ partner: 'acme', email: 'ada@acme.example' });
      const token = /^https:\/\/portal\.example\/portal\/invite\/([A-Za-z0-9_-]{43})$/.exec(invited.invite_url)?.[1];
      expect(token, invited.invite_url).to.be.a('string');
      const lifetime = new Date(invited.expires_at).getTime() - before;
      expect(lifetime).to.be.within(72 * 3_600_000 - 1, 72 * 3_600_000 + 30_000);
      const stored = JSON.stringify((await sql`select * from admin_invitations`.execute(testDb.db)).rows);
      expect(stored).to.not.include(token!);
      expect(stored).to.include(hashApiKey(token!));

      const text = await cli(['admins', 'invite', '--partner', 'globex', '--email', 'gil@globex.example'], env);
      expect([text.code, text.stderr]).to.deep.equal([0, "note: the link uses the portal's default address, http://127.0.0.1:3001; PORTAL_PUBLIC_URL sets the one partners reach\n"]);
      expect(text.stdout).to.match(/^invited gil@globex\.example as an admin of partner globex; this link works once, until \S+:\nhttp:\/\/127\.0\.0\.1:3001\/portal\/invite\/[A-Za-z0-9_-]{43}\n$/);

      const unknown = await cli(['admins', 'invite', '--partner', 'nobody', '--email', 'a@b.example'], env);
      expect([unknown.code, unknown.stderr]).to.deep.equal([1, 'error: no partner with id "nobody"; import its catalog first\n']);
      const bad = await cli(['admins', 'invite', '--partner', 'acme', '--email', 'not-an-email'], env);
      expect([bad.code, bad.stderr]).to.deep.equal([1, 'error: "not-an-email" is not an email address\n']);
      const missing = await cli(['admins', 'invite', '--partner', 'acme'], env);
      expect(missing.code).to.equal(2);
      expect(missing.stderr).to.match(/^error: admins invite needs --email <email>\n/);
    });

    it('with REDIS_URL unreachable: prints what an import it cannot announce committed, says it stands, and exits 3, again until told; prints a new key with a warning', async function () {
      const unreachable = { ...env, REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
      // The file as imported before: nothing to tell, so nothing asked of Redis.
      const same = await cli(['import', join(dir, 'catalog.json'), '--quiet', '--json'], unreachable);
      expect([same.code, same.stderr]).to.deep.equal([0, '']);
      const changed = fixtureDocument() as { partners: { products: { title: string }[] }[] };
      changed.partners[1]!.products[0]!.title = 'Retitled while Redis is away';
      await writeFile(join(dir, 'changed.json'), JSON.stringify(changed));
      const imported = await cli(['import', join(dir, 'changed.json'), '--quiet', '--json'], unreachable);
      expect(imported.code).to.equal(3);
      // What was committed, as a told import prints it: the counts per kind.
      expect(Object.keys(imported.json() as object)).to.include('products');
      const redis = /^redis:\/\/(.+)$/.exec(unreachable.REDIS_URL)![1]!;
      expect(imported.stderr).to.equal('warning: the import is committed to the database, but the running instances could not be told through Redis ' +
        `(REDIS_URL: Redis at ${redis} did not answer (connect ECONNREFUSED ${redis}): start it, or correct REDIS_URL): instances still connected to Redis may serve what they hold for up to CACHE_TTL_MS; ` +
        'run the command again with Redis reachable to tell them at once\n');
      // Written already, the change is still to be told: the same file again tries again.
      const again = await cli(['import', join(dir, 'changed.json'), '--quiet', '--json'], unreachable);
      expect([again.code, (again.json() as { products: { updated: number } }).products.updated]).to.deep.equal([3, 0]);
      const before = await keyCount();
      const issued = await cli(['keys', 'issue', '--partner', 'acme', '--json'], unreachable);
      expect(issued.code, issued.stderr).to.equal(0);
      expect((issued.json() as { key: string }).key).to.match(/^pcat_live_/);
      expect(issued.stderr).to.match(/^warning: key acme-[0-9a-f]+ is issued, but the running instances could not be told through Redis \(REDIS_URL: Redis at 127\.0\.0\.1:\d+ did not answer/);
      expect(issued.stderr).to.not.include((issued.json() as { key: string }).key);
      expect(await keyCount()).to.equal(before + 1);
    });
  });
});
