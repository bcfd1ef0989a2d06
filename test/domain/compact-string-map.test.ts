import { expect } from 'chai';
import fc from 'fast-check';
import { CompactStringMap } from '../../src/domain/compact-string-map.js';

describe('CompactStringMap', function () {
  it('holds what a Map holds, for any strings and numbers set in any order', function () {
    fc.assert(fc.property(fc.array(fc.tuple(fc.string({ unit: 'binary', maxLength: 12 }), fc.integer({ min: 0, max: 2 ** 40 }))), fc.array(fc.string({ unit: 'binary' })), (entries, probes) => {
      const compact = new CompactStringMap();
      const map = new Map<string, number>();
      for (const [key, value] of entries) {
        compact.set(key, value);
        map.set(key, value);
      }
      expect(compact.size).to.equal(map.size);
      for (const key of [...map.keys(), ...probes]) {
        expect(compact.get(key)).to.equal(map.get(key));
        expect(compact.has(key)).to.equal(map.has(key));
      }
    }), { numRuns: 300 });
  });

  it('grows past its first arrays and keeps telling apart keys that share bytes', function () {
    const compact = new CompactStringMap();
    for (let i = 0; i < 50_000; i += 1) compact.set(`B-${i}`, i * 3);
    compact.set('', 7).set('é', 8).set('e\u0301', 9).set('😀'.repeat(100), 10);
    expect(compact.size).to.equal(50_004);
    expect([compact.get('B-0'), compact.get('B-49999'), compact.get('B-50000')]).to.deep.equal([0, 149_997, undefined]);
    expect([compact.get(''), compact.get('é'), compact.get('e\u0301'), compact.get('😀'.repeat(100))]).to.deep.equal([7, 8, 9, 10]);
    expect(compact.has('B-1 ')).to.equal(false);
  });
});
