import { expect } from 'chai';
import { AnswerRing, MAX_KEY_LENGTH, NO_SUCH_ANSWER, type RingEntry } from '../../src/adapters/cache/answer-ring.js';
import { seededRandom } from '../support/seeded-random.js';

const sizeOf = (bodyBytes: number): number => (bodyBytes < 0 ? 256 : bodyBytes + 1_000);

/** A body whose every byte says which key and which version it belongs to, so a wrong or torn one shows. */
function bodyOf(key: string, version: number, length: number): Buffer {
  const stamp = Buffer.from(`${key}#${version};`);
  const body = Buffer.alloc(length);
  for (let at = 0; at < length; at += stamp.length) stamp.copy(body, at, 0, Math.min(stamp.length, length - at));
  return body;
}

const answerOf = (key: string, version: number, length: number): { body: Buffer; etag: string } =>
  ({ body: bodyOf(key, version, length), etag: `"${key}-${version}"` });


function expectAnswer(found: RingEntry | undefined, expected: { body: Buffer; etag: string }): void {
  expect(found).to.not.equal(undefined);
  expect(found).to.not.equal(NO_SUCH_ANSWER);
  const answer = found as { body: Buffer; etag: string };
  expect(answer.etag).to.equal(expected.etag);
  expect(answer.body.equals(expected.body), 'the body stored under the key').to.equal(true);
}

describe('answer ring (the response cache\'s store)', function () {
  it('hands back each answer and remembered miss as stored, under its own key only', function () {
    const ring = new AnswerRing({ maxBytes: 1024 * 1024, maxEntries: 100, ttlMs: 0, sizeOf });
    const a = answerOf('a', 1, 3_000);
    ring.set('a', a);
    ring.set('missing', null);
    expectAnswer(ring.get('a'), a);
    expect(ring.get('missing')).to.equal(NO_SUCH_ANSWER);
    expect(ring.get('b')).to.equal(undefined);
    // The copy of `a` handed out is kept, and counted for its body's bytes.
    expect([ring.entries, ring.bytes]).to.deep.equal([2, 4_000 + 256 + 3_000]);
  });

  it('keeps the copy it hands out and hands it out again, counted in its bytes, until the entry goes', function () {
    const ring = new AnswerRing({ maxBytes: 1024 * 1024, maxEntries: 100, ttlMs: 0, sizeOf });
    ring.set('a', answerOf('a', 1, 3_000));
    expect(ring.bytes).to.equal(4_000);
    const first = ring.get('a');
    expectAnswer(first, answerOf('a', 1, 3_000));
    expect(ring.get('a'), 'the same copy').to.equal(first);
    expect(ring.bytes).to.equal(4_000 + 3_000);
    // Stored again: the old copy goes with the old entry, and the new answer is copied anew.
    ring.set('a', answerOf('a', 2, 2_000));
    expect(ring.bytes).to.equal(3_000);
    const second = ring.get('a');
    expect(second).to.not.equal(first);
    expectAnswer(second, answerOf('a', 2, 2_000));
    expect(ring.bytes).to.equal(3_000 + 2_000);
    ring.set('a', null);
    expect(ring.bytes).to.equal(256);
  });

  it('keeps a small copy in a buffer of its own, not a slice of a shared pool', function () {
    const ring = new AnswerRing({ maxBytes: 1024 * 1024, maxEntries: 100, ttlMs: 0, sizeOf });
    ring.set('small', answerOf('small', 1, 300));
    const { body } = ring.get('small') as { body: Buffer };
    expect([body.byteOffset, body.buffer.byteLength], 'a kept 300-byte copy holds 300 bytes, not a pool chunk').to.deep.equal([0, 300]);
  });

  it('keeps copies within a sixteenth of its bound, and hands out the others without keeping them', function () {
    // 1 MiB: 64 KiB of copies, sixteen of 4,000 bytes.
    const ring = new AnswerRing({ maxBytes: 1024 * 1024, maxEntries: 100, ttlMs: 0, sizeOf });
    for (let i = 0; i < 20; i += 1) ring.set(`k${i}`, answerOf(`k${i}`, 1, 4_000));
    const firsts = Array.from({ length: 20 }, (_, i) => ring.get(`k${i}`));
    expect(ring.bytes).to.equal(20 * 5_000 + 16 * 4_000);
    for (let i = 0; i < 20; i += 1) {
      const again = ring.get(`k${i}`);
      expectAnswer(again, answerOf(`k${i}`, 1, 4_000));
      expect(again === firsts[i], `k${i} handed out from its kept copy`).to.equal(i < 16);
    }
    // A kept copy's entry gone makes room for another's.
    ring.set('k0', null);
    expect(ring.get('k16')).to.equal(ring.get('k16'));
    expect(ring.bytes).to.equal(19 * 5_000 + 256 + 16 * 4_000);
  });

  it('takes a key given with a prefix as the prefix and the key joined, wherever the text is split', function () {
    const ring = new AnswerRing({ maxBytes: 1024 * 1024, maxEntries: 100, ttlMs: 0, sizeOf });
    ring.set('SKU-1', answerOf('a', 1, 100), ring.prefix('acme\u0000tok\u0000s'));
    expectAnswer(ring.get('acme\u0000tok\u0000sSKU-1'), answerOf('a', 1, 100));
    expectAnswer(ring.get('sSKU-1', ring.prefix('acme\u0000tok\u0000')), answerOf('a', 1, 100));
    expectAnswer(ring.get('', ring.prefix('acme\u0000tok\u0000sSKU-1')), answerOf('a', 1, 100));
    // Another prefix, or the same text one character short or long, is another key.
    expect(ring.get('SKU-1', ring.prefix('acme\u0000tok2\u0000s'))).to.equal(undefined);
    expect(ring.get('SKU-', ring.prefix('acme\u0000tok\u0000s'))).to.equal(undefined);
    expect(ring.get('SKU-11', ring.prefix('acme\u0000tok\u0000s'))).to.equal(undefined);
    // Stored again under the joined text: one entry, the new answer.
    ring.set('acme\u0000tok\u0000sSKU-1', answerOf('a', 2, 100));
    expectAnswer(ring.get('SKU-1', ring.prefix('acme\u0000tok\u0000s')), answerOf('a', 2, 100));
    expect(ring.entries).to.equal(1);
    // The length bound and the one-byte rule hold for the two parts together.
    ring.set('k'.repeat(MAX_KEY_LENGTH - 3), answerOf('long', 1, 10), ring.prefix('abcd'));
    ring.set('x', answerOf('wide', 1, 10), ring.prefix('кофе'));
    expect(ring.entries).to.equal(1);
  });

  it('holds what is stored again under a key in place of what was there', function () {
    const ring = new AnswerRing({ maxBytes: 1024 * 1024, maxEntries: 100, ttlMs: 0, sizeOf });
    ring.set('a', answerOf('a', 1, 2_000));
    ring.set('a', answerOf('a', 2, 500));
    expectAnswer(ring.get('a'), answerOf('a', 2, 500));
    ring.set('a', null);
    expect(ring.get('a')).to.equal(NO_SUCH_ANSWER);
    expect([ring.entries, ring.bytes]).to.deep.equal([1, 256]);
  });

  it('takes an answer stored again as it is held (requests that missed together) as held, so it pushes no other entry out', function () {
    const ring = new AnswerRing({ maxBytes: 1024 * 1024, maxEntries: 100, ttlMs: 0, sizeOf });
    ring.set('a', answerOf('a', 1, 1_000));
    ring.set('gone', null);
    // A thousand records of 1 KB would go round the ring's 16 KB pages many times over, had each been written.
    for (let i = 0; i < 1_000; i += 1) {
      ring.set('b', answerOf('b', 1, 1_000));
      ring.set('gone', null);
    }
    expectAnswer(ring.get('a'), answerOf('a', 1, 1_000));
    expectAnswer(ring.get('b'), answerOf('b', 1, 1_000));
    expect(ring.get('gone')).to.equal(NO_SUCH_ANSWER);
    expect(ring.pageBytesInUse, 'the two records written fill one page').to.equal(ring.pageBytes);
    // Another answer under the key (another ETag, or the same one over another body) still takes its place.
    ring.set('b', answerOf('b', 2, 1_000));
    expectAnswer(ring.get('b'), answerOf('b', 2, 1_000));
    ring.set('b', { body: bodyOf('b', 2, 900), etag: answerOf('b', 2, 1_000).etag });
    expect((ring.get('b') as { body: Buffer }).body.length).to.equal(900);
    expect(ring.entries).to.equal(3);
  });

  it('lets the entry held longest go first, whether or not it was asked for since', function () {
    const ring = new AnswerRing({ maxBytes: 1024 * 1024, maxEntries: 3, ttlMs: 0, sizeOf });
    for (const key of ['a', 'b', 'c']) ring.set(key, answerOf(key, 1, 100));
    expectAnswer(ring.get('a'), answerOf('a', 1, 100));
    ring.set('d', answerOf('d', 1, 100));
    expect(ring.get('a')).to.equal(undefined);
    for (const key of ['b', 'c', 'd']) expectAnswer(ring.get(key), answerOf(key, 1, 100));
  });

  it('serves nothing past its TTL, and lets it go when asked for', function () {
    let now = 0;
    const ring = new AnswerRing({ maxBytes: 1024 * 1024, maxEntries: 10, ttlMs: 100, sizeOf, now: () => now });
    ring.set('a', answerOf('a', 1, 100));
    ring.set('gone', null);
    now = 100;
    expectAnswer(ring.get('a'), answerOf('a', 1, 100));
    now = 101;
    expect(ring.get('a')).to.equal(undefined);
    expect(ring.get('gone')).to.equal(undefined);
    expect([ring.entries, ring.bytes]).to.deep.equal([0, 0]);
  });

  it('never holds an answer counted for more than the whole bound, nor one whose ETag is not plain ASCII', function () {
    const ring = new AnswerRing({ maxBytes: 5_000, maxEntries: 10, ttlMs: 0, sizeOf });
    ring.set('big', answerOf('big', 1, 4_001));
    ring.set('odd', { body: Buffer.from('{}'), etag: '"é"' });
    expect([ring.get('big'), ring.get('odd'), ring.entries, ring.bytes]).to.deep.equal([undefined, undefined, 0, 0]);
    ring.set('fits', answerOf('fits', 1, 4_000));
    expectAnswer(ring.get('fits'), answerOf('fits', 1, 4_000));
  });

  it('hands out a copy that stays as it was when the ring writes over the page it came from', function () {
    const ring = new AnswerRing({ maxBytes: 64 * 1024, maxEntries: 1_000, ttlMs: 0, sizeOf });
    ring.set('first', answerOf('first', 1, 900));
    const handedOut = ring.get('first') as { body: Buffer };
    const before = Buffer.from(handedOut.body);
    for (let i = 0; i < 200; i += 1) ring.set(`k${i}`, answerOf(`k${i}`, 1, 900));
    expect(ring.get('first'), 'written over by now').to.equal(undefined);
    expect(handedOut.body.equals(before)).to.equal(true);
  });

  it('keeps a body too large for its pages in a buffer of its own, counted and let go like any other', function () {
    const ring = new AnswerRing({ maxBytes: 200_000, maxEntries: 10, ttlMs: 0, sizeOf });
    const large = answerOf('large', 1, 50_000);
    ring.set('large', large);
    const found = ring.get('large') as { body: Buffer };
    expect(found.body).to.equal(large.body);
    expect([ring.entries, ring.bytes]).to.deep.equal([1, 51_000]);
    for (let i = 0; i < 4; i += 1) ring.set(`l${i}`, answerOf(`l${i}`, 1, 40_000));
    expect(ring.get('large'), 'the bytes bound reached: held longest, gone first').to.equal(undefined);
  });

  it('keeps a large body that is a view into a larger buffer (a driver\'s read) as a copy of its own bytes', function () {
    const ring = new AnswerRing({ maxBytes: 200_000, maxEntries: 10, ttlMs: 0, sizeOf });
    const read = Buffer.alloc(120_000);
    const body = bodyOf('view', 1, 50_000);
    body.copy(read, 30_000);
    ring.set('view', { body: read.subarray(30_000, 80_000), etag: '"view-1"' });
    read.fill(0);
    const found = ring.get('view') as { body: Buffer; etag: string };
    expectAnswer(found, { body, etag: '"view-1"' });
    expect(found.body.buffer.byteLength, 'the kept buffer holds the body alone').to.equal(50_000);
  });

  it('reserves its byte bound\'s pages when made, and writes each only when it first reaches it', function () {
    const ring = new AnswerRing({ maxBytes: 1024 * 1024, maxEntries: 1_000, ttlMs: 0, sizeOf });
    expect(ring.pageBytes).to.equal(16 * 1024);
    expect([ring.pageBytesInUse, ring.pageBytesReserved]).to.deep.equal([0, 64 * 16 * 1024]);
    ring.set('a', answerOf('a', 1, 3_000));
    expect([ring.pageBytesInUse, ring.pageBytesReserved]).to.deep.equal([16 * 1024, 63 * 16 * 1024]);
    for (let i = 0; i < 100; i += 1) ring.set(`k${i}`, answerOf(`k${i}`, 1, 3_000));
    expect(ring.pageBytesInUse + ring.pageBytesReserved, 'no page more than the bound\'s').to.equal(64 * 16 * 1024);
    expectAnswer(ring.get('k99'), answerOf('k99', 1, 3_000));
  });

  it('reserves nothing for a byte bound past what it reserves, and takes its pages as it reaches them', function () {
    const ring = new AnswerRing({ maxBytes: Number.MAX_SAFE_INTEGER, maxEntries: 100, ttlMs: 0, sizeOf });
    expect(ring.pageBytesReserved).to.equal(0);
    ring.set('a', answerOf('a', 1, 3_000));
    expect(ring.pageBytesInUse).to.equal(ring.pageBytes);
    expectAnswer(ring.get('a'), answerOf('a', 1, 3_000));
  });

  it('takes pages as its entries\' records need them, not its whole byte bound, however long it goes round', function () {
    const ring = new AnswerRing({ maxBytes: 1024 * 1024, maxEntries: 100, ttlMs: 0, sizeOf });
    for (let i = 0; i < 10_000; i += 1) ring.set(`k${i}`, answerOf(`k${i}`, 1, 1_000));
    expect(ring.entries).to.equal(100);
    // 100 records of about 1 KB: a little over 100 KB, in pages of 16 KB; the bound would allow 64 pages.
    expect(ring.pageBytes).to.equal(16 * 1024);
    expect(ring.pageBytesInUse).to.be.at.most(10 * ring.pageBytes);
    for (let i = 9_900; i < 10_000; i += 1) expectAnswer(ring.get(`k${i}`), answerOf(`k${i}`, 1, 1_000));
    // The same 50 keys stored again and again: each leaves its last record behind, gone but not yet passed.
    for (let i = 0; i < 10_000; i += 1) ring.set(`r${i % 50}`, answerOf(`r${i % 50}`, i, 1_000));
    expect(ring.pageBytesInUse).to.be.at.most(10 * ring.pageBytes);
    for (let i = 9_950; i < 10_000; i += 1) expectAnswer(ring.get(`r${i % 50}`), answerOf(`r${i % 50}`, i, 1_000));
  });

  it('under any mix of sets, misses and reads, answers each key with its latest answer or nothing, in order, within its bounds', function () {
    for (const [seed, maxBytes, maxEntries] of [[1, 40_000, 30], [2, 300_000, 1_000], [3, 1024 * 1024, 400], [4, 12_000, 1_000]] as const) {
      const next = seededRandom(seed);
      const ring = new AnswerRing({ maxBytes, maxEntries, ttlMs: 0, sizeOf });
      // What each key holds, if anything, and when it was stored, as this test tracks it.
      const latest = new Map<string, { version: number; length: number; stored: number } | null>();
      const stored = new Map<string, number>();
      let version = 0;
      for (let step = 0; step < 10_000; step += 1) {
        const key = `k${Math.floor(next() * 300)}`;
        if (next() < 0.5) {
          version += 1;
          // Mostly small bodies, some near or over a page's quarter, some misses.
          const roll = next();
          const length = roll < 0.1 ? -1 : roll < 0.9 ? Math.floor(next() * 3_000) : Math.floor(next() * 20_000);
          // A miss stored over a miss the ring holds is taken as held: it keeps its place among the oldest.
          const again = length < 0 && ring.get(key) === NO_SUCH_ANSWER;
          ring.set(key, length < 0 ? null : answerOf(key, version, length));
          if (sizeOf(length) <= maxBytes) {
            latest.set(key, { version, length, stored: step });
            if (!again) stored.set(key, step);
          } else {
            latest.delete(key);
            stored.delete(key);
          }
          // What was just stored is there to be read.
          const found = ring.get(key);
          if (sizeOf(length) <= maxBytes) {
            if (length < 0) expect(found).to.equal(NO_SUCH_ANSWER);
            else expectAnswer(found, answerOf(key, version, length));
          }
        } else {
          const found = ring.get(key);
          const expected = latest.get(key);
          if (found === undefined) {
            // Gone: and so is every key stored before it, which leave first.
            if (stored.has(key)) {
              const since = stored.get(key)!;
              for (const [other, at] of stored) if (at <= since) stored.delete(other);
              for (const other of [...latest.keys()]) if (!stored.has(other)) latest.delete(other);
            }
          } else if (expected === null || expected?.length === -1) {
            expect(found).to.equal(NO_SUCH_ANSWER);
          } else {
            expect(expected, `${key} was never stored, or is gone, yet the ring answers for it`).to.not.equal(undefined);
            expectAnswer(found, answerOf(key, expected!.version, expected!.length));
          }
        }
        expect(ring.entries).to.be.at.most(maxEntries);
        expect(ring.bytes).to.be.at.most(maxBytes);
      }
      expect(ring.pageBytesInUse, 'its pages take no more than its bound, rounded up to a page').to.be.at.most(Math.max(maxBytes + 16 * 1024, 8 * 1024));
    }
  });

  it('finds each key it holds among thousands, as its key table grows and entries leave', function () {
    const next = seededRandom(7);
    const ring = new AnswerRing({ maxBytes: 64 * 1024 * 1024, maxEntries: 3_000, ttlMs: 0, sizeOf });
    // The keys held, oldest first, with the version each holds: at most 3,000 of them, the oldest leaving first.
    const model = new Map<string, number>();
    for (let step = 0; step < 40_000; step += 1) {
      // Keys that differ only in their last characters, or are one another's prefixes, in a table of thousands.
      const n = Math.floor(next() * 8_000);
      const key = `p\u0000${n}`;
      if (next() < 0.6) {
        ring.set(key, answerOf(`p${n}`, step, 20));
        model.delete(key);
        model.set(key, step);
        if (model.size > 3_000) model.delete(model.keys().next().value!);
      } else {
        const version = model.get(key);
        if (version === undefined) expect(ring.get(key), key).to.equal(undefined);
        else expectAnswer(ring.get(key), answerOf(key.replace('\u0000', ''), version, 20));
      }
    }
    expect(ring.entries).to.equal(model.size);
    for (const [key, version] of model) expectAnswer(ring.get(key), answerOf(key.replace('\u0000', ''), version, 20));
  });

  it('holds no entry under a key it cannot keep as one byte a character, or longer than it keeps, and forgets what that key held', function () {
    const ring = new AnswerRing({ maxBytes: 1024 * 1024, maxEntries: 100, ttlMs: 0, sizeOf });
    const long = 'k'.repeat(MAX_KEY_LENGTH);
    ring.set(long, answerOf('long', 1, 10));
    ring.set('café', answerOf('cafe', 1, 10));
    ring.set('кофе', answerOf('coffee', 1, 10));
    ring.set(`${long}k`, answerOf('longer', 1, 10));
    expectAnswer(ring.get(long), answerOf('long', 1, 10));
    expectAnswer(ring.get('café'), answerOf('cafe', 1, 10));
    expect(ring.get('cafe')).to.equal(undefined);
    expect(ring.get('кофе')).to.equal(undefined);
    expect(ring.get(`${long}k`)).to.equal(undefined);
    expect(ring.entries).to.equal(2);
  });
});

describe('answer ring shared by owners', function () {
  it('under one owner\'s flood and the others\' mixed use, answers each key with its latest answer or nothing, holds the others\' entries, and keeps its bounds', function () {
    for (const [seed, maxBytes, maxEntries] of [[11, 64 * 1024, 400], [12, 1024 * 1024, 300], [13, 300_000, 5_000], [14, 40_000, 1_000]] as const) {
      const next = seededRandom(seed);
      const ring = new AnswerRing({ maxBytes, maxEntries, ttlMs: 0, sizeOf });
      const prefixes = [ring.prefix('flood\u0000s', 0), ring.prefix('acme\u0000s', 1), ring.prefix('globex\u0000s', 2)];
      // The latest answer stored under each of the others' keys: [owner, key] -> version, length (-1: a miss) and the step it was stored at.
      const latest = new Map<string, { version: number; length: number; step: number }>();
      const floodHeavy = (): boolean => ring.heldBy(0).entries > maxEntries / 2 || ring.heldBy(0).bytes > maxBytes / 2;
      // The last step that began or ended with the flood holding no more than its share: only then may the others' entries go.
      let lastLight = -1;
      let version = 0;
      let flooded = 0;
      for (let step = 0; step < 20_000; step += 1) {
        if (!floodHeavy()) lastLight = step;
        version += 1;
        if (next() < 0.8) {
          // The flood: a new key each time, mostly misses, some small answers.
          flooded += 1;
          const length = next() < 0.7 ? -1 : Math.floor(next() * 400);
          ring.set(`F${flooded}`, length < 0 ? null : answerOf(`F${flooded}`, version, length), prefixes[0]);
        } else {
          const owner = next() < 0.5 ? 1 : 2;
          const key = `k${Math.floor(next() * 12)}`;
          const id = `${owner}/${key}`;
          // The others hold little: a dozen keys each, well within their share of either bound.
          if (next() < 0.3) {
            const length = next() < 0.2 ? -1 : Math.floor(next() * Math.min(2_000, maxBytes / 100));
            ring.set(key, length < 0 ? null : answerOf(id, version, length), prefixes[owner]);
            latest.set(id, { version, length, step });
          }
          const found = ring.get(key, prefixes[owner]);
          const expected = latest.get(id);
          if (expected === undefined) expect(found, id).to.equal(undefined);
          else if (found === undefined) expect(lastLight, `${id} gone while the flood held more than its share all along (seed ${seed}, step ${step})`).to.be.at.least(expected.step);
          else if (expected.length < 0) expect(found).to.equal(NO_SUCH_ANSWER);
          else expectAnswer(found, answerOf(id, expected.version, expected.length));
          if (found === undefined) latest.delete(id);
        }
        if (!floodHeavy()) lastLight = step;
        expect(ring.entries).to.be.at.most(maxEntries);
        expect(ring.bytes).to.be.at.most(maxBytes);
      }
      expect(ring.pageBytesInUse, 'its pages take no more than its bound, rounded up to a page').to.be.at.most(Math.max(maxBytes + 16 * 1024, 8 * 1024));
      // The flood's oldest went first: what it holds now is its latest.
      const held = ring.heldBy(0).entries;
      for (let n = flooded - held + 1; n <= flooded; n += 1) expect(ring.get(`F${n}`, prefixes[0]), `F${n}`).to.not.equal(undefined);
    }
  });
});
