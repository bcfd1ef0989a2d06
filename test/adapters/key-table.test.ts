import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { KeyTable } from '../../src/adapters/cache/key-table.js';
import { principalOf, type KeyMode } from '../../src/domain/api-key.js';
import { seededRandom } from '../support/seeded-random.js';

const hashOf = (n: number): string => createHash('sha256').update(`key ${String(n)}`).digest('hex');

interface Held {
  readonly sha256: string;
  readonly partnerId: string;
  readonly mode: KeyMode;
}

describe('KeyTable', function () {
  it('finds every key by hash and by id as a map would, through 60,000 random sets and deletes (growth, reuse and id compaction included)', function () {
    const random = seededRandom(63);
    const table = new KeyTable();
    const model = new Map<string, Held>();
    const idByHash = new Map<string, string>();
    const pick = (n: number): number => Math.floor(random() * n);
    for (let step = 0; step < 60_000; step += 1) {
      // Ids of several lengths and code units beyond Latin-1, so the arena and the id index see all kinds.
      const keyId = `${'k'.repeat(pick(3))}key-${String(pick(6_000))}${pick(10) === 0 ? 'é→' : ''}`;
      if (random() < 0.35) {
        table.delete(keyId);
        idByHash.delete(model.get(keyId)?.sha256 ?? '');
        model.delete(keyId);
        continue;
      }
      const held: Held = { sha256: hashOf(pick(8_000)), partnerId: `partner-${String(pick(50))}`, mode: random() < 0.2 ? 'test' : 'live' };
      table.set(keyId, held.partnerId, held.mode, held.sha256);
      idByHash.delete(model.get(keyId)?.sha256 ?? '');
      // Another key held under the same hash lets go of it, as the database's unique hash says it must have.
      model.delete(idByHash.get(held.sha256) ?? '');
      model.set(keyId, held);
      idByHash.set(held.sha256, keyId);
    }
    expect(table.size).to.equal(model.size);
    for (const [keyId, held] of model) {
      const principal = principalOf(keyId, held.partnerId, held.mode);
      expect(table.getById(keyId), keyId).to.deep.equal(principal);
      expect(table.get(held.sha256), keyId).to.deep.equal(principal);
    }
    const heldHashes = new Set([...model.values()].map((held) => held.sha256));
    for (let n = 0; n < 8_000; n += 1) if (!heldHashes.has(hashOf(n))) expect(table.get(hashOf(n))).to.equal(undefined);
    expect(table.getById('key-never')).to.equal(undefined);
  });

  it('answers the same principal object for a key until it changes, and a new one after', function () {
    const table = new KeyTable();
    table.set('acme-1', 'acme', 'live', hashOf(1));
    const first = table.get(hashOf(1));
    expect(table.getById('acme-1')).to.equal(first);
    table.set('acme-1', 'acme', 'test', hashOf(1));
    expect(table.get(hashOf(1))).to.not.equal(first);
    expect(table.get(hashOf(1))).to.deep.equal(principalOf('acme-1', 'acme', 'test'));
  });

  it('refuses to hold a hash that is not 64 lowercase hex characters, and finds none', function () {
    const table = new KeyTable();
    expect(() => table.set('acme-1', 'acme', 'live', hashOf(1).toUpperCase())).to.throw('64 lowercase hex');
    expect(table.get(hashOf(1).toUpperCase())).to.equal(undefined);
    expect(table.get('')).to.equal(undefined);
    expect(table.size).to.equal(0);
  });
});
