import { expect } from 'chai';
import { KEY_USAGE_FLUSH_SLICE, KEY_USAGE_MAX_KEYS, KeyUsageRecorder } from '../../src/application/access/key-usage.js';
import { ManualClock } from '../support/portal-world.js';

/** The minute of keys the service is sized for (docs: 100,000 keys used in a minute). */
const SIZED_FOR_KEYS = 100_000;

type Use = { readonly keyId: string; readonly at: Date };

/** A store that keeps every call's uses. */
function recordingStore(): { calls: Use[][]; saveLastUsed(uses: readonly Use[]): Promise<void> } {
  const calls: Use[][] = [];
  return { calls, saveLastUsed: (uses) => { calls.push([...uses]); return Promise.resolve(); } };
}

describe('the key usage recorder', function () {
  it('holds every distinct key of a 100,000-key minute, and the flush hands each to the store with its last time', async function () {
    expect(KEY_USAGE_MAX_KEYS).to.be.greaterThan(SIZED_FOR_KEYS);
    const clock = new ManualClock();
    const usage = new KeyUsageRecorder(clock);
    for (let i = 0; i < SIZED_FOR_KEYS; i += 1) {
      usage.used(`acme-${i}`);
      clock.advance(1);
    }
    // Used again later in the minute: the later time is the one written.
    usage.used('acme-0');
    const store = recordingStore();
    expect(await usage.flush(store)).to.equal(SIZED_FOR_KEYS);
    const written = new Map(store.calls.flat().map((use) => [use.keyId, use.at.getTime()]));
    expect(written.size).to.equal(SIZED_FOR_KEYS);
    expect(store.calls.flat()).to.have.length(SIZED_FOR_KEYS);
    expect(written.get('acme-0')).to.equal(clock.now());
    expect(written.get(`acme-${SIZED_FOR_KEYS - 1}`)).to.equal(clock.now() - 1);
    expect(store.calls.every((call) => call.length <= KEY_USAGE_FLUSH_SLICE)).to.equal(true);
    expect(await usage.flush(store)).to.equal(0);
  });

  it('past its bound, drops new keys but still moves the times of the keys it holds', async function () {
    const clock = new ManualClock();
    const usage = new KeyUsageRecorder(clock, 2);
    usage.used('a');
    usage.used('b');
    usage.used('c');
    clock.advance(5);
    usage.used('a');
    const store = recordingStore();
    expect(await usage.flush(store)).to.equal(2);
    expect(store.calls.flat().map((use) => [use.keyId, use.at.getTime()])).to.deep.equal([['a', clock.now()], ['b', clock.now() - 5]]);
  });

  it('keeps the whole batch for the next flush when a slice of it fails, with a later use winning', async function () {
    const clock = new ManualClock();
    const usage = new KeyUsageRecorder(clock);
    const keys = KEY_USAGE_FLUSH_SLICE + 1;
    for (let i = 0; i < keys; i += 1) usage.used(`k-${i}`);
    let calls = 0;
    // The first slice is written, the second fails.
    const failing = { saveLastUsed: () => (calls += 1) === 1 ? Promise.resolve() : Promise.reject(new Error('database down')) };
    let failed = false;
    await usage.flush(failing).catch(() => { failed = true; });
    expect(failed).to.equal(true);
    clock.advance(7);
    usage.used('k-0');
    const store = recordingStore();
    expect(await usage.flush(store)).to.equal(keys);
    const written = new Map(store.calls.flat().map((use) => [use.keyId, use.at.getTime()]));
    expect(written.get('k-0')).to.equal(clock.now());
    expect(written.get(`k-${keys - 1}`)).to.equal(clock.now() - 7);
  });
});
