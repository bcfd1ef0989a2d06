import { expect } from 'chai';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { KeySetCache, type KeySetVersionReader } from '../../src/adapters/cache/key-set-cache.js';
import type { KeyChangesRead, KeySetSource, LiveKeyRow } from '../../src/application/access/key-set-source.js';
import { MemoryChangeVersions } from '../support/memory-change-versions.js';
import { ChangesElsewhere } from '../../src/application/instances/changes-elsewhere.js';
import type { AnnouncedKeyChanges } from '../../src/application/instances/change-versions.js';
import { principalOf, generateApiKey, hashApiKey, type Principal } from '../../src/domain/api-key.js';
import { TIMEOUTS } from '../../src/adapters/timeouts.js';
import { codeOfRejection } from '../support/domain-error.js';

/**
 * Stands for the database: keys by id, each change numbered as the key-change counter numbers them,
 * counting every read. Each read hands out new principal objects, as rows read from a database would be.
 */
class CountingKeySource implements KeySetSource {
  readonly reads = { whole: 0, changes: 0, findActiveByHash: 0, isLive: 0 };
  /** Rows handed out by reads of the changes. */
  changedRowsRead = 0;
  /** Reads of the changes that failed, the database down. */
  failedReads = 0;
  private readonly rows = new Map<string, { row: LiveKeyRow; live: boolean; change: number }>();
  private lastChange = 0;
  /** The database cannot be reached: every read fails as the MySQL adapter's would. */
  down = false;
  /** Reads of the changes wait for this (a slow database). */
  held: Promise<void> = Promise.resolve();

  add(keyId: string, partnerId: string): string {
    const key = generateApiKey();
    this.rows.set(keyId, { row: { ...principalOf(keyId, partnerId, 'live'), sha256: hashApiKey(key) }, live: true, change: ++this.lastChange });
    return key;
  }

  remove(keyId: string): void {
    const stored = this.rows.get(keyId);
    if (stored !== undefined) this.rows.set(keyId, { ...stored, live: false, change: ++this.lastChange });
  }

  async readLiveKeys(open: () => (page: readonly LiveKeyRow[]) => void): Promise<number> {
    this.reads.whole += 1;
    // A real read takes a while: requests arriving meanwhile find it in flight.
    await nextTurn();
    if (this.down) throw unreachable();
    open()([...this.rows.values()].filter((stored) => stored.live).map((stored) => ({ ...stored.row })));
    return this.lastChange;
  }

  async keysChangedAfter(after: number): Promise<KeyChangesRead> {
    this.reads.changes += 1;
    await nextTurn();
    await this.held;
    if (this.down) {
      this.failedReads += 1;
      throw unreachable();
    }
    const rows = [...this.rows.values()].filter((stored) => stored.change > after).sort((a, b) => a.change - b.change);
    this.changedRowsRead += rows.length;
    return { rows: rows.map((stored) => ({ ...stored.row, live: stored.live })), through: this.lastChange };
  }

  findActiveByHash(sha256: string): Promise<Principal | null> {
    this.reads.findActiveByHash += 1;
    if (this.down) return Promise.reject(unreachable());
    const stored = [...this.rows.values()].find((candidate) => candidate.live && candidate.row.sha256 === sha256);
    return Promise.resolve(stored === undefined ? null : principalOf(stored.row.keyId, stored.row.partnerId, 'live'));
  }

  isStillActive(): Promise<boolean> {
    return Promise.resolve(true);
  }

  isLive(principal: Principal): Promise<boolean> {
    this.reads.isLive += 1;
    const stored = this.rows.get(principal.keyId);
    return Promise.resolve(stored !== undefined && stored.live && stored.row.partnerId === principal.partnerId);
  }
}

/** What the MySQL adapter throws when the database cannot be reached. */
function unreachable(): Error {
  return Object.assign(new Error('database: connection failed (ECONNREFUSED)'), { storageUnavailable: true });
}

const MAX_AGE_MS = 60_000;

/** A held store over a counting source, its tokens in memory, read and reported the way the rate-limit step does. */
async function setup(): Promise<{
  held: KeySetCache;
  source: CountingKeySource;
  versions: MemoryChangeVersions;
  watch: ChangesElsewhere;
  reader: KeySetVersionReader & { down: boolean };
  clock: { t: number; now(): number };
  acmeKey: string;
}> {
  const source = new CountingKeySource();
  const acmeKey = source.add('acme-prod', 'acme');
  source.add('globex-prod', 'globex');
  const versions = new MemoryChangeVersions();
  const watch = new ChangesElsewhere();
  // As the rate limiter does: while the shared store cannot be asked, the watch is told and there is no token.
  const reader = {
    down: false,
    keysVersion: async (): Promise<string | null> => {
      if (reader.down) {
        watch.sharingLost();
        return null;
      }
      const token = await versions.keysVersion();
      watch.keysSeen(token);
      return token;
    },
    keyChangesMark: (): Promise<number | null> => (reader.down ? Promise.resolve(null) : versions.keyChangesMark()),
    keyChangesSince: (mark: number): Promise<AnnouncedKeyChanges | null> => (reader.down ? Promise.resolve(null) : versions.keyChangesSince(mark)),
  };
  const clock = { t: 1_000_000, now() { return this.t; } };
  const held = new KeySetCache(source, { watch, versions: reader, clock, maxAgeMs: MAX_AGE_MS });
  // As the service starts: the token first, then the keys.
  await reader.keysVersion();
  await held.load();
  expect(source.reads, 'read whole once at start, then the changes made meanwhile').to.deep.include({ whole: 1, changes: 1 });
  return { held, source, versions, watch, reader, clock, acmeKey };
}

const ACME: Principal = principalOf('acme-prod', 'acme', 'live');

describe('KeySetCache', function () {
  it('authenticates a held key with no read of the source once loaded', async function () {
    const { held, source, reader, acmeKey } = await setup();
    for (let i = 0; i < 10; i += 1) {
      const principal = await held.findActiveByHash(hashApiKey(acmeKey));
      expect(principal).to.deep.equal(ACME);
      await reader.keysVersion();
      expect(await held.isStillActive(principal!)).to.equal(true);
    }
    expect(source.reads).to.deep.equal({ whole: 1, changes: 1, findActiveByHash: 0, isLive: 0 });
  });

  it('refuses 1000 unknown well-formed keys with no read of the source while the token is unchanged', async function () {
    const { held, source } = await setup();
    for (let i = 0; i < 1_000; i += 1) expect(await held.findActiveByHash(hashApiKey(generateApiKey()))).to.equal(null);
    expect(source.reads).to.deep.equal({ whole: 1, changes: 1, findActiveByHash: 0, isLive: 0 });
  });

  it('finds a key issued and announced elsewhere on its first request, with one read of the set', async function () {
    const { held, source, versions } = await setup();
    const issued = source.add('acme-new', 'acme');
    await versions.keysChanged();
    expect(await held.findActiveByHash(hashApiKey(issued))).to.deep.equal(principalOf('acme-new', 'acme', 'live'));
    expect(source.reads.changes).to.equal(2);
    expect(await held.findActiveByHash(hashApiKey(issued))).to.deep.equal(principalOf('acme-new', 'acme', 'live'));
    expect(source.reads).to.deep.equal({ whole: 1, changes: 2, findActiveByHash: 0, isLive: 0 });
  });

  it('refuses a key revoked and announced elsewhere once the watch has seen the new token', async function () {
    const { held, source, versions, reader, acmeKey } = await setup();
    const principal = await held.findActiveByHash(hashApiKey(acmeKey));
    source.remove('acme-prod');
    await versions.keysChanged();
    expect(await held.isStillActive(principal!), 'the watch has not seen the new token yet').to.equal(true);
    await reader.keysVersion();
    expect(await held.isStillActive(principal!)).to.equal(false);
    expect(await held.findActiveByHash(hashApiKey(acmeKey))).to.equal(null);
    expect(await held.isStillActive(principalOf('globex-prod', 'globex', 'live'))).to.equal(true);
    expect(source.reads.changes).to.equal(2);
  });

  it('refuses a key revoked and announced elsewhere on a request whose read of the token was given up as slow', async function () {
    const { held, source, versions, watch, acmeKey } = await setup();
    const principal = await held.findActiveByHash(hashApiKey(acmeKey));
    source.remove('acme-prod');
    await versions.keysChanged();
    // The count of this request did not come back in time: no token seen, but the set is read again.
    watch.versionsMissed('acme');
    expect(await held.isStillActive(principal!)).to.equal(false);
    expect(source.reads.changes).to.equal(2);
    expect(watch.isShared(), 'a slow read is no loss').to.equal(true);
  });

  it('refuses a principal whose key id is held for another partner', async function () {
    const { held } = await setup();
    expect(await held.isStillActive(principalOf('acme-prod', 'globex', 'live'))).to.equal(false);
    expect(await held.isStillActive(principalOf('nobody', 'acme', 'live'))).to.equal(false);
  });

  describe('while the shared store is lost', function () {
    it('reads the source for every lookup', async function () {
      const { held, source, watch, acmeKey } = await setup();
      watch.sharingLost();
      const unknown = hashApiKey(generateApiKey());
      for (let i = 0; i < 3; i += 1) {
        expect(await held.findActiveByHash(hashApiKey(acmeKey))).to.deep.equal(ACME);
        expect(await held.findActiveByHash(unknown)).to.equal(null);
      }
      expect(source.reads).to.deep.equal({ whole: 1, changes: 1, findActiveByHash: 6, isLive: 0 });
    });

    it('asks the source about a principal that came from the held set, and not about one read from the source', async function () {
      const { held, source, watch, acmeKey } = await setup();
      const fromHeld = await held.findActiveByHash(hashApiKey(acmeKey));
      watch.sharingLost();
      expect(await held.isStillActive(fromHeld!)).to.equal(true);
      expect(source.reads.isLive).to.equal(1);

      const fromSource = await held.findActiveByHash(hashApiKey(acmeKey));
      expect(source.reads.findActiveByHash).to.equal(1);
      expect(await held.isStillActive(fromSource!)).to.equal(true);
      expect(source.reads.isLive, 'just read from the source on this request').to.equal(1);

      // Revoked meanwhile: the held set still has it, the source decides.
      source.remove('acme-prod');
      expect(await held.isStillActive(fromHeld!)).to.equal(false);
      expect(source.reads).to.deep.equal({ whole: 1, changes: 1, findActiveByHash: 1, isLive: 2 });
    });

    it('reads the set once more when the shared store returns, then holds it again', async function () {
      const { held, source, watch, acmeKey } = await setup();
      watch.sharingLost();
      source.remove('acme-prod');
      const issued = source.add('acme-new', 'acme');
      expect(await held.findActiveByHash(hashApiKey(acmeKey))).to.equal(null);
      watch.sharingRegained();
      for (let i = 0; i < 5; i += 1) {
        // Asked before any token is read after the return: what was held before the loss is not trusted.
        expect(await held.isStillActive(ACME)).to.equal(false);
        expect(await held.findActiveByHash(hashApiKey(issued))).to.deep.equal(principalOf('acme-new', 'acme', 'live'));
      }
      expect(source.reads.changes).to.equal(2);
      expect(source.reads.findActiveByHash).to.equal(1);
      // The first token read after the return finds the token of before: nothing more to read.
      expect(await held.findActiveByHash(hashApiKey(`pcat_live_${'z'.repeat(40)}`))).to.equal(null);
      expect(source.reads.changes).to.equal(2);
    });
  });

  it('looks a key that is not held up in the source when the token cannot be read', async function () {
    const { held, source, watch, reader } = await setup();
    const issued = source.add('acme-new', 'acme');
    reader.down = true;
    expect(await held.findActiveByHash(hashApiKey(issued))).to.deep.equal(principalOf('acme-new', 'acme', 'live'));
    expect(watch.isShared()).to.equal(false);
    expect(source.reads).to.deep.equal({ whole: 1, changes: 1, findActiveByHash: 1, isLive: 0 });
  });

  it('reads the set again once it is older than maxAgeMs, with no token change', async function () {
    const { held, source, clock, acmeKey } = await setup();
    const issued = source.add('acme-unannounced', 'acme');
    clock.t += MAX_AGE_MS - 1;
    expect(await held.findActiveByHash(hashApiKey(acmeKey))).to.deep.equal(ACME);
    expect(source.reads.changes).to.equal(1);
    clock.t += 1;
    expect(await held.findActiveByHash(hashApiKey(issued))).to.deep.equal(principalOf('acme-unannounced', 'acme', 'live'));
    expect(source.reads.changes).to.equal(2);
    await held.findActiveByHash(hashApiKey(acmeKey));
    expect(source.reads.changes).to.equal(2);
  });

  it('applies a key change by reading only the keys it changed, never the whole set again', async function () {
    const { held, source, versions, reader, acmeKey } = await setup();
    for (let i = 0; i < 1_000; i += 1) source.add(`many-${String(i)}`, 'globex');
    await versions.keysChanged();
    await reader.keysVersion();
    expect(await held.isStillActive(ACME)).to.equal(true);
    const rowsBefore = source.changedRowsRead;
    source.remove('acme-prod');
    await versions.keysChanged({ withdrawn: ['acme-prod'], added: [] });
    await reader.keysVersion();
    expect(await held.findActiveByHash(hashApiKey(acmeKey))).to.equal(null);
    expect(source.changedRowsRead - rowsBefore, 'the one key the change wrote').to.equal(1);
    expect(source.reads.whole).to.equal(1);
    expect(await held.isStillActive(principalOf('many-999', 'globex', 'live'))).to.equal(true);
  });

  it('answers a held key at once when the set is old, and reads the changes since in the background', async function () {
    const { held, source, clock, acmeKey } = await setup();
    source.remove('globex-prod');
    clock.t += MAX_AGE_MS;
    const reads = source.reads.changes;
    let release!: () => void;
    source.held = new Promise((resolve) => (release = resolve));
    expect(await held.findActiveByHash(hashApiKey(acmeKey)), 'answered while the read of the changes waits').to.deep.equal(ACME);
    expect(await held.isStillActive(ACME)).to.equal(true);
    expect(source.reads.changes, 'one read started').to.equal(reads + 1);
    release();
    // Revoked without an announcement: refused once the background read has applied it, with no other read.
    while (await held.isStillActive(principalOf('globex-prod', 'globex', 'live'))) await nextTurn();
    expect(source.reads.changes).to.equal(reads + 1);
  });

  describe('before the whole set is read', function () {
    it('is not loaded, and reads each key from the source, until a read succeeds', async function () {
      const source = new CountingKeySource();
      const key = source.add('acme-prod', 'acme');
      source.down = true;
      const watch = new ChangesElsewhere();
      const versions = new MemoryChangeVersions();
      const held = new KeySetCache(source, {
        watch, clock: { now: () => 0 }, maxAgeMs: MAX_AGE_MS,
        versions: { keysVersion: () => versions.keysVersion(), keyChangesMark: () => versions.keyChangesMark(), keyChangesSince: (mark) => versions.keyChangesSince(mark) },
      });
      const failures: unknown[] = [];
      let firstFailure!: () => void;
      const failed = new Promise<void>((resolve) => (firstFailure = resolve));
      const loaded = held.load((error) => {
        failures.push(error);
        firstFailure();
      });
      await failed;
      expect(held.isLoaded()).to.equal(false);
      const refused: unknown = await held.findActiveByHash(hashApiKey(key)).then(() => null, (error: unknown) => error);
      expect(refused, 'the source decides, and cannot').to.have.property('storageUnavailable', true);
      source.down = false;
      expect(await held.findActiveByHash(hashApiKey(key)), 'read from the source').to.deep.equal(ACME);
      expect(await held.isStillActive(ACME), 'just read from the source').to.equal(true);
      expect(source.reads.findActiveByHash).to.equal(2);
      await loaded;
      expect(held.isLoaded()).to.equal(true);
      expect(failures).to.have.length.at.least(1);
      expect(await held.findActiveByHash(hashApiKey(key))).to.deep.equal(ACME);
      expect(source.reads.findActiveByHash, 'held now').to.equal(2);
    });
  });

  it('reads the set once for many requests that arrive while a read is needed', async function () {
    const { held, source, versions, reader, acmeKey } = await setup();
    const issued = source.add('acme-new', 'acme');
    await versions.keysChanged();
    await reader.keysVersion();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      i % 2 === 0 ? held.findActiveByHash(hashApiKey(issued)) : held.isStillActive(ACME)));
    expect(answers.filter((a, i) => i % 2 === 0 && a !== null)).to.have.length(25);
    expect(answers.filter((a, i) => i % 2 === 1 && a === true)).to.have.length(25);
    expect(await held.findActiveByHash(hashApiKey(acmeKey))).to.deep.equal(ACME);
    expect(source.reads).to.deep.equal({ whole: 1, changes: 2, findActiveByHash: 0, isLive: 0 });
  });

  describe('while the database cannot be read', function () {
    it('refuses a key revoked and announced meanwhile on its next request, and serves every other held key', async function () {
      const { held, source, versions, reader, acmeKey } = await setup();
      const globexKey = source.add('globex-second', 'globex');
      await versions.keysChanged({ withdrawn: [], added: ['globex-second'] });
      await reader.keysVersion();
      expect(await held.findActiveByHash(hashApiKey(globexKey))).to.deep.equal(principalOf('globex-second', 'globex', 'live'));
      const principal = await held.findActiveByHash(hashApiKey(acmeKey));
      source.down = true;
      source.remove('acme-prod');
      await versions.keysChanged({ withdrawn: ['acme-prod'], added: [] });
      await reader.keysVersion();
      expect(await held.isStillActive(principal!)).to.equal(false);
      expect(await held.findActiveByHash(hashApiKey(acmeKey))).to.equal(null);
      expect(await held.findActiveByHash(hashApiKey(globexKey))).to.deep.equal(principalOf('globex-second', 'globex', 'live'));
      expect(await held.isStillActive(principalOf('globex-prod', 'globex', 'live'))).to.equal(true);
      // No key was added since the last read: a key not held is not live.
      expect(await held.findActiveByHash(hashApiKey(generateApiKey()))).to.equal(null);
    });

    it('answers held keys past maxAgeMs, reading the changes at most once a retry period', async function () {
      const { held, source, clock, acmeKey } = await setup();
      source.down = true;
      clock.t += MAX_AGE_MS;
      const reads = source.reads.changes;
      expect(await held.findActiveByHash(hashApiKey(acmeKey)), 'answered, the read started').to.deep.equal(ACME);
      while (source.failedReads === 0) await nextTurn();
      for (let i = 0; i < 20; i += 1) {
        expect(await held.findActiveByHash(hashApiKey(acmeKey))).to.deep.equal(ACME);
        expect(await held.isStillActive(ACME)).to.equal(true);
      }
      expect(source.reads.changes).to.equal(reads + 1);
      source.down = false;
      source.remove('acme-prod');
      clock.t += TIMEOUTS.keySetRetryMs;
      // Revoked unannounced: refused once the next background read has applied it.
      while (await held.isStillActive(ACME)) await nextTurn();
      expect(source.reads.changes).to.equal(reads + 2);
    });

    it('cannot decide a key it does not hold once a key was added meanwhile, and finds it once the database answers', async function () {
      const { held, source, versions, reader, clock, acmeKey } = await setup();
      source.down = true;
      const issued = source.add('acme-new', 'acme');
      await versions.keysChanged({ withdrawn: [], added: ['acme-new'] });
      await reader.keysVersion();
      expect(await codeOfRejection(held.findActiveByHash(hashApiKey(issued)))).to.equal('service_unavailable');
      expect(await codeOfRejection(held.findActiveByHash(hashApiKey(generateApiKey())))).to.equal('service_unavailable');
      expect(await held.findActiveByHash(hashApiKey(acmeKey))).to.deep.equal(ACME);
      const reads = source.reads.changes;
      // Tried again in the background at most once a retry period, while the held keys answer.
      for (let i = 0; i < 20; i += 1) expect(await held.findActiveByHash(hashApiKey(acmeKey))).to.deep.equal(ACME);
      expect(source.reads.changes).to.equal(reads);
      source.down = false;
      clock.t += TIMEOUTS.keySetRetryMs;
      expect(await held.findActiveByHash(hashApiKey(acmeKey))).to.deep.equal(ACME);
      await nextTurn();
      await nextTurn();
      expect(await held.findActiveByHash(hashApiKey(issued))).to.deep.equal(principalOf('acme-new', 'acme', 'live'));
      expect(source.reads.changes).to.equal(reads + 1);
    });

    it('cannot decide a held key given another hash or partner meanwhile (withdrawn and added again), and serves the others', async function () {
      const { held, source, versions, reader, acmeKey } = await setup();
      source.down = true;
      await versions.keysChanged({ withdrawn: ['acme-prod'], added: ['acme-prod'] });
      await reader.keysVersion();
      expect(await codeOfRejection(held.findActiveByHash(hashApiKey(acmeKey)))).to.equal('service_unavailable');
      expect(await codeOfRejection(held.isStillActive(ACME))).to.equal('service_unavailable');
      expect(await held.isStillActive(principalOf('globex-prod', 'globex', 'live'))).to.equal(true);
    });

    it('cannot decide any key after an announcement that did not say what changed, and does not retry at every request', async function () {
      const { held, source, versions, reader, clock, acmeKey } = await setup();
      source.down = true;
      await versions.keysChanged();
      await reader.keysVersion();
      expect(await codeOfRejection(held.findActiveByHash(hashApiKey(acmeKey)))).to.equal('service_unavailable');
      const reads = source.reads.changes;
      for (let i = 0; i < 20; i += 1) expect(await codeOfRejection(held.isStillActive(ACME))).to.equal('service_unavailable');
      expect(source.reads.changes, 'no read until the retry period ends').to.equal(reads);
      source.down = false;
      clock.t += TIMEOUTS.keySetRetryMs;
      expect(await held.findActiveByHash(hashApiKey(acmeKey))).to.deep.equal(ACME);
    });

    it('cannot decide a key when the shared store cannot tell the changes since the last read either', async function () {
      const { held, source, versions, reader, acmeKey } = await setup();
      source.down = true;
      await versions.keysChanged({ withdrawn: ['globex-prod'], added: [] });
      await reader.keysVersion();
      // As after Redis restarted empty: what was announced before is gone.
      reader.keyChangesSince = () => Promise.resolve(null);
      expect(await codeOfRejection(held.findActiveByHash(hashApiKey(acmeKey)))).to.equal('service_unavailable');
    });
  });
});
