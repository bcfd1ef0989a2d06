import { expect } from 'chai';
import { hashFrom, hashState, newHashKey, startingState } from '../../src/adapters/cache/keyed-hash.js';

/** HalfSipHash with c rounds a word and d at the end, written plainly from its definition, over bytes. */
function halfSipHash(k0: number, k1: number, bytes: readonly number[], c: number, d: number): number {
  let v0 = k0 | 0;
  let v1 = k1 | 0;
  let v2 = (0x6c796765 ^ k0) | 0;
  let v3 = (0x74656462 ^ k1) | 0;
  const rotl = (x: number, b: number): number => (x << b) | (x >>> (32 - b));
  const round = (): void => {
    v0 = (v0 + v1) | 0; v1 = rotl(v1, 5) ^ v0; v0 = rotl(v0, 16);
    v2 = (v2 + v3) | 0; v3 = rotl(v3, 8) ^ v2;
    v0 = (v0 + v3) | 0; v3 = rotl(v3, 7) ^ v0;
    v2 = (v2 + v1) | 0; v1 = rotl(v1, 13) ^ v2; v2 = rotl(v2, 16);
  };
  const words: number[] = [];
  for (let at = 0; at + 4 <= bytes.length; at += 4) words.push(bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24));
  let last = bytes.length << 24;
  for (let at = bytes.length & ~3, shift = 0; at < bytes.length; at += 1, shift += 8) last |= bytes[at]! << shift;
  for (const m of [...words, last]) {
    v3 ^= m;
    for (let i = 0; i < c; i += 1) round();
    v0 ^= m;
  }
  v2 ^= 0xff;
  for (let i = 0; i < d; i += 1) round();
  return (v1 ^ v3) >>> 0;
}

const bytesOf = (text: string): number[] => Array.from({ length: text.length }, (_, i) => text.charCodeAt(i) & 0xff);

describe('keyed hash of the response cache\'s key table (HalfSipHash-1-3)', function () {
  it('is HalfSipHash as its reference defines it: the plain form gives the reference\'s own 2-4 results', function () {
    // The reference's first results for HalfSipHash-2-4, 32 bits, key 00 01 .. 07, inputs 00 01 .. (n - 1).
    const expected = [0x5b9f35a9, 0xb85a4727, 0x03a662fa, 0x04e7fe8a, 0x89466e2a, 0x69b6fac5, 0x23fc6358, 0xc563cf8b];
    expected.forEach((hash, n) => expect(halfSipHash(0x03020100, 0x07060504, [...Array(n).keys()], 2, 4), `${n} bytes`).to.equal(hash));
  });

  it('gives HalfSipHash-1-3 of the prefix and the rest joined, wherever the text is split', function () {
    const key = startingState(0x03020100, 0x07060504);
    for (const text of ['', 'a', 'acme\u0000s', 'acme\u00001\u0000f0e1d2c3-b4a5-4678-9abc-def012345678\u0000sTENT-2P', 'ÿ\u00ff\u0001x'.repeat(9)]) {
      const reference = halfSipHash(0x03020100, 0x07060504, bytesOf(text), 1, 3);
      for (let split = 0; split <= text.length; split += 1) {
        expect(hashFrom(hashState(key, text.slice(0, split)), text.slice(split)) >>> 0, `${JSON.stringify(text)} split at ${split}`).to.equal(reference);
      }
    }
  });

  it('draws a new key each time: the same text hashes apart under two keys', function () {
    const texts = Array.from({ length: 64 }, (_, i) => `partner\u0000sSKU-${i}`);
    const [one, two] = [newHashKey(), newHashKey()];
    const same = texts.filter((text) => hashFrom(one, text) === hashFrom(two, text));
    expect(same.length).to.be.at.most(1);
  });
});
