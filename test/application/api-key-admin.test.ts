import { expect } from 'chai';
import { AuthenticateKey } from '../../src/application/access/authenticate-key.js';
import { IssueApiKey } from '../../src/application/keys/issue-api-key.js';
import { KeyUsageRecorder } from '../../src/application/access/key-usage.js';
import { ListApiKeys } from '../../src/application/keys/list-api-keys.js';
import { ReplaceApiKey } from '../../src/application/keys/replace-api-key.js';
import { RevokeApiKey } from '../../src/application/keys/revoke-api-key.js';
import { generateApiKey, hashApiKey, isWellFormedApiKey, principalOf } from '../../src/domain/api-key.js';
import { adminRefusal, memoryPortalWorld, type PortalWorld } from '../support/portal-world.js';

describe('key use cases, on the memory adapters', function () {
  let world: PortalWorld;
  let issue: IssueApiKey;
  let revoke: RevokeApiKey;
  let replace: ReplaceApiKey;
  let authenticate: AuthenticateKey;
  const admin = { adminEmail: 'ada@acme.example' };

  beforeEach(async function () {
    world = await memoryPortalWorld();
    const { keys, announcer, admin: { audit }, clock } = world;
    issue = new IssueApiKey(keys, announcer, audit, clock);
    revoke = new RevokeApiKey(keys, announcer, audit, clock);
    replace = new ReplaceApiKey(keys, announcer, audit, clock);
    authenticate = new AuthenticateKey(world.store);
  });

  const works = async (key: string): Promise<boolean> =>
    authenticate.execute({ authorization: `Bearer ${key}` }).then(() => true, () => false);

  it('issues a key that authenticates at once, stores no key, announces it, and logs key.created with the admin', async function () {
    const { issued, announceFailure } = await issue.execute({ mode: 'live', partnerId: 'acme', label: 'Shop', actor: admin });
    expect(isWellFormedApiKey(issued.key)).to.equal(true);
    expect(issued).to.include({ partner: 'acme', label: 'Shop' });
    expect(announceFailure).to.equal(null);
    expect(world.announcer.announced).to.equal(1);
    expect(await works(issued.key)).to.equal(true);
    expect(await authenticate.execute({ apiKey: issued.key })).to.deep.equal(principalOf(issued.id, 'acme', 'live'));
    const listed = await new ListApiKeys(world.keys).execute({ partnerId: 'acme' });
    expect(listed.find((k) => k.id === issued.id)).to.deep.include({ label: 'Shop', revokedAt: null, lastUsedAt: null });
    expect(JSON.stringify(listed)).to.not.include(issued.key);
    const events = await world.admin.audit.list('acme', 10);
    expect(events).to.deep.equal([{ at: issued.created_at, partnerId: 'acme', adminEmail: admin.adminEmail, action: 'key.created', keyId: issued.id }]);
    expect(JSON.stringify(events)).to.not.include(issued.key.slice(10));
  });

  it('refuses a key for a partner that does not exist', async function () {
    expect((await adminRefusal(issue.execute({ mode: 'live', partnerId: 'nobody', label: null, actor: null }))).code).to.equal('partner_not_found');
  });

  it('revokes a key: refused from the next authentication on, logged once, its first revocation time kept', async function () {
    const { issued } = await issue.execute({ mode: 'live', partnerId: 'acme', label: null, actor: admin });
    const first = await revoke.execute({ partnerId: 'acme', keyId: issued.id, actor: admin });
    expect(await works(issued.key)).to.equal(false);
    world.clock.advance(5_000);
    const again = await revoke.execute({ partnerId: null, keyId: issued.id, actor: null });
    expect(again.revoked_at).to.deep.equal(first.revoked_at);
    const actions = (await world.admin.audit.list('acme', 10)).map((e) => e.action);
    expect(actions).to.deep.equal(['key.revoked', 'key.created']);
  });

  it('treats another partner\'s key id as a missing one, and changes nothing', async function () {
    const { issued } = await issue.execute({ mode: 'live', partnerId: 'globex', label: null, actor: null });
    for (const attempt of [
      revoke.execute({ partnerId: 'acme', keyId: issued.id, actor: admin }),
      replace.execute({ partnerId: 'acme', keyId: issued.id, actor: admin }),
      revoke.execute({ partnerId: 'acme', keyId: 'no-such-key', actor: admin }),
    ]) {
      const error = await adminRefusal(attempt);
      expect(error.code).to.equal('key_not_found');
    }
    expect(await works(issued.key)).to.equal(true);
    expect(await world.admin.audit.list('acme', 10)).to.deep.equal([]);
  });

  it('replaces a key: a new key with the same label works, the old one is refused, in one step', async function () {
    const { issued: old } = await issue.execute({ mode: 'live', partnerId: 'acme', label: 'Warehouse', actor: admin });
    world.clock.advance(60_000);
    const { issued: fresh } = await replace.execute({ partnerId: 'acme', keyId: old.id, actor: admin });
    expect(fresh.id).to.not.equal(old.id);
    expect(fresh.label).to.equal('Warehouse');
    expect(await works(old.key)).to.equal(false);
    expect(await works(fresh.key)).to.equal(true);
    const listed = await new ListApiKeys(world.keys).execute({ partnerId: 'acme' });
    expect(listed.find((k) => k.id === old.id)?.revokedAt).to.deep.equal(fresh.created_at);
    const events = (await world.admin.audit.list('acme', 10)).map((e) => [e.action, e.keyId]);
    expect(events).to.deep.equal([['key.created', fresh.id], ['key.replaced', old.id], ['key.created', old.id]]);
    // A revoked key cannot be replaced again.
    expect((await adminRefusal(replace.execute({ partnerId: 'acme', keyId: old.id, actor: admin }))).code).to.equal('key_not_active');
  });

  it('issues, lists and replaces a test key: its prefix is pcat_test_, it reads the sandbox, and a replacement is a test key too', async function () {
    const { issued } = await issue.execute({ mode: 'test', partnerId: 'acme', label: 'CI', actor: admin });
    expect(issued.key).to.match(/^pcat_test_[A-Za-z0-9]{40}$/);
    expect(issued).to.include({ partner: 'acme', mode: 'test' });
    expect(await authenticate.execute({ apiKey: issued.key })).to.deep.equal({ keyId: issued.id, partnerId: 'acme', mode: 'test', catalogId: '~acme' });
    const listed = await new ListApiKeys(world.keys).execute({ partnerId: 'acme' });
    expect(listed.find((k) => k.id === issued.id)).to.deep.include({ mode: 'test', label: 'CI' });
    const { issued: fresh } = await replace.execute({ partnerId: 'acme', keyId: issued.id, actor: admin });
    expect(fresh.key).to.match(/^pcat_test_/);
    expect(fresh.mode).to.equal('test');
    expect(await works(fresh.key)).to.equal(true);
  });

  it('takes a key only with its own mode\'s prefix: a stored test key presented under the live prefix is refused, and the reverse', async function () {
    const random = generateApiKey().slice('pcat_live_'.length);
    // Stored as a catalog file may declare it: the hash of a live-prefixed key, declared test.
    world.store.addKey({ keyId: 'mislabelled', partnerId: 'acme', mode: 'test', sha256: hashApiKey(`pcat_live_${random}`) });
    expect(await works(`pcat_live_${random}`)).to.equal(false);
    world.store.addKey({ keyId: 'mislabelled-2', partnerId: 'acme', mode: 'live', sha256: hashApiKey(`pcat_test_${random}`) });
    expect(await works(`pcat_test_${random}`)).to.equal(false);
    world.store.addKey({ keyId: 'right', partnerId: 'acme', mode: 'live', sha256: hashApiKey(`pcat_live_${random}x`) });
    expect(await works(`pcat_live_${random}x`)).to.equal(true);
  });

  it('still hands out an issued key when the instances cannot be told, saying why; a revocation that cannot be told fails saying it is committed', async function () {
    world.announcer.failing = 'redis down';
    const { issued, announceFailure } = await issue.execute({ mode: 'live', partnerId: 'acme', label: null, actor: null });
    expect(announceFailure).to.equal('redis down');
    expect(await works(issued.key)).to.equal(true);
    let message = '';
    await revoke.execute({ partnerId: null, keyId: issued.id, actor: null }).catch((error: unknown) => {
      message = (error as Error).message;
    });
    expect(message).to.match(/revocation of key .* is committed to the database, but the running instances could not be told through Redis \(redis down\)/);
    expect(await works(issued.key)).to.equal(false);
  });

  it('records "last used" in memory at authentication and writes it in one batch per flush', async function () {
    const usage = new KeyUsageRecorder(world.clock);
    const counting = new AuthenticateKey(world.store, undefined, usage);
    const list = new ListApiKeys(world.keys, usage);
    const { issued } = await issue.execute({ mode: 'live', partnerId: 'acme', label: null, actor: null });
    let writes = 0;
    const store = { saveLastUsed: (uses: readonly { keyId: string; at: Date }[]) => { writes += 1; return world.keys.saveLastUsed(uses); } };
    for (let i = 0; i < 50; i += 1) await counting.execute({ apiKey: issued.key });
    const usedAt = new Date(world.clock.now());
    // Seen by this instance's listing before any write.
    expect((await list.execute({ partnerId: 'acme' })).find((k) => k.id === issued.id)?.lastUsedAt).to.deep.equal(usedAt);
    expect((await new ListApiKeys(world.keys).execute({ partnerId: 'acme' })).find((k) => k.id === issued.id)?.lastUsedAt).to.equal(null);
    expect(await usage.flush(store)).to.equal(1);
    expect(writes).to.equal(1);
    expect((await new ListApiKeys(world.keys).execute({ partnerId: 'acme' })).find((k) => k.id === issued.id)?.lastUsedAt).to.deep.equal(usedAt);
    // Nothing new: no write at all.
    expect(await usage.flush(store)).to.equal(0);
    expect(writes).to.equal(1);
  });

  it('keeps the uses of a failed flush for the next one', async function () {
    const usage = new KeyUsageRecorder(world.clock);
    usage.used('acme-prod');
    let failed = false;
    await usage.flush({ saveLastUsed: () => Promise.reject(new Error('database down')) }).catch(() => { failed = true; });
    expect(failed).to.equal(true);
    expect(usage.unwritten('acme-prod')).to.deep.equal(new Date(world.clock.now()));
    expect(await usage.flush(world.keys)).to.equal(1);
    expect((await world.keys.find('acme-prod'))?.lastUsedAt).to.deep.equal(new Date(world.clock.now()));
  });
});
