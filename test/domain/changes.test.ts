import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { decodeCursor, encodeCursor, UNSIGNED_CURSOR_WINDOW_MS, type CursorKey } from '../../src/domain/changes.js';
import { MAX_CURSOR_LENGTH } from '../../src/domain/changes-view.js';
import { codeOf } from '../support/domain-error.js';

const SIGNING_SINCE = Date.parse('2026-12-01T00:00:00Z');
/** A deployment that served acme's feed before it signed, and signs since SIGNING_SINCE. */
const key = (secret = randomBytes(32), unsignedIssuedTo: ReadonlySet<string> = new Set(['acme'])): CursorKey =>
  ({ secret, signingSince: new Date(SIGNING_SINCE), unsignedIssuedTo });
const NOW = SIGNING_SINCE + 60_000;

/** A cursor of the unsigned form issued before signing began: its tag anyone can compute. */
const unsignedCursor = (partnerId: string, seq: number): string =>
  `c1.${seq.toString(36)}.${createHash('sha256').update(`changes:${partnerId}`).digest('base64url').slice(0, 11)}`;

describe('changes-feed cursors', function () {
  it('reads back the position it names, for the partner it was issued to, in at most 64 characters', function () {
    const k = key();
    fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 63 }), fc.maxSafeNat(), (partnerId, seq) => {
      const cursor = encodeCursor(k, partnerId, seq);
      expect(cursor).to.match(/^c2\.[0-9a-z]+\.[A-Za-z0-9_-]{16}$/);
      expect(cursor.length).to.be.at.most(MAX_CURSOR_LENGTH);
      expect(decodeCursor(k, partnerId, cursor, NOW)).to.equal(seq);
    }));
  });

  it('refuses a cursor issued to another partner, or signed with another secret, with invalid_cursor', function () {
    const k = key();
    const cursor = encodeCursor(k, 'acme', 42);
    expect(codeOf(() => decodeCursor(k, 'globex', cursor, NOW))).to.equal('invalid_cursor');
    expect(codeOf(() => decodeCursor(key(), 'acme', cursor, NOW))).to.equal('invalid_cursor');
    // The same secret in another deployment would take it: the secret is all that makes a cursor.
    expect(decodeCursor(key(Buffer.from(k.secret)), 'acme', cursor, NOW)).to.equal(42);
  });

  it('refuses a cursor whose position or MAC was changed, in any character', function () {
    const k = key();
    const cursor = encodeCursor(k, 'acme', 1_000_000);
    const [, position, mac] = cursor.split('.') as [string, string, string];
    const tampered = [
      `c2.${(1_000_001).toString(36)}.${mac}`, `c2.0${position}.${mac}`, `c2.${position}.${mac.slice(0, -1)}`, `c2.${position}.${mac}A`,
      `c1.${position}.${mac}`, `c3.${position}.${mac}`, `${cursor} `, cursor.toUpperCase(),
      ...Array.from({ length: mac.length }, (_, i) => `c2.${position}.${mac.slice(0, i)}${mac[i] === 'A' ? 'B' : 'A'}${mac.slice(i + 1)}`),
    ];
    for (const bad of tampered) expect(codeOf(() => decodeCursor(k, 'acme', bad, NOW)), bad).to.equal('invalid_cursor');
  });

  it('refuses anything that is not a cursor with invalid_cursor', function () {
    const k = key();
    fc.assert(fc.property(fc.string({ maxLength: 70 }), (raw) => {
      expect(codeOf(() => decodeCursor(k, 'acme', raw, NOW))).to.equal('invalid_cursor');
    }));
    expect(codeOf(() => decodeCursor(k, 'acme', `c2.${'z'.repeat(11)}.${'A'.repeat(16)}`, NOW))).to.equal('invalid_cursor');
  });

  it('takes an unsigned c1 cursor from a partner served unsigned until 30 days after signing began, then answers invalid_cursor', function () {
    const k = key();
    const cursor = unsignedCursor('acme', 77);
    expect(UNSIGNED_CURSOR_WINDOW_MS).to.equal(30 * 24 * 60 * 60 * 1000);
    expect(decodeCursor(k, 'acme', cursor, SIGNING_SINCE)).to.equal(77);
    expect(decodeCursor(k, 'acme', cursor, SIGNING_SINCE + UNSIGNED_CURSOR_WINDOW_MS - 1)).to.equal(77);
    expect(codeOf(() => decodeCursor(k, 'acme', cursor, SIGNING_SINCE + UNSIGNED_CURSOR_WINDOW_MS))).to.equal('invalid_cursor');
    expect(codeOf(() => decodeCursor(k, 'acme', cursor, SIGNING_SINCE + 365 * 24 * 60 * 60 * 1000))).to.equal('invalid_cursor');
    // Another partner's, or a made-up one, is never taken, inside the window or after it.
    for (const at of [NOW, SIGNING_SINCE + UNSIGNED_CURSOR_WINDOW_MS]) {
      expect(codeOf(() => decodeCursor(k, 'globex', cursor, at))).to.equal('invalid_cursor');
      expect(codeOf(() => decodeCursor(k, 'acme', 'c1.25.AAAAAAAAAAA', at))).to.equal('invalid_cursor');
    }
  });

  it('refuses an unsigned c1 cursor, its own tag and all, from a partner the deployment never served unsigned', function () {
    // Globex's feed began after signing; a deployment that never served one unsigned takes none at all.
    for (const [k, partnerId] of [[key(), 'globex'], [key(randomBytes(32), new Set()), 'acme']] as const) {
      for (const at of [SIGNING_SINCE, NOW]) {
        expect(codeOf(() => decodeCursor(k, partnerId, unsignedCursor(partnerId, 1), at))).to.equal('invalid_cursor');
      }
    }
  });

  it('issues signed cursors only, whatever the cursor it read from', function () {
    const k = key();
    const next = encodeCursor(k, 'acme', decodeCursor(k, 'acme', unsignedCursor('acme', 5), NOW));
    expect(next.startsWith('c2.')).to.equal(true);
    expect(decodeCursor(k, 'acme', next, NOW)).to.equal(5);
  });
});
