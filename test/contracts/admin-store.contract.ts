import { expect } from 'chai';
import type { AdminAccounts } from '../../src/application/admin-sign-in/admin-accounts.js';
import type { AdminSessions } from '../../src/application/admin-sign-in/admin-sessions.js';
import type { AuditLog } from '../../src/application/admin-sign-in/audit-log.js';
import type { Invitations } from '../../src/application/admin-sign-in/invitations.js';
import type { SignInThrottle } from '../../src/application/admin-sign-in/sign-in-throttle.js';
import { SIGN_IN_FAILURE_WINDOW_MS, SIGN_IN_LOCK_MS, type AdminAccount, type AdminSession } from '../../src/domain/admin.js';

export interface AdminStoreUnderTest {
  readonly accounts: AdminAccounts;
  readonly invitations: Invitations;
  readonly sessions: AdminSessions;
  readonly throttle: SignInThrottle;
  readonly audit: AuditLog;
}

/** Called per test: empty portal state beside the fixture's partners (acme, globex). */
export type AdminStoreFactory = () => Promise<AdminStoreUnderTest>;

export interface AdminStoreContractOptions {
  /**
   * Failures of other emails a lock must outlive: the flood that emptied the memory store's lock
   * table (52,500); fewer where each costs a round trip, as long as the store could not just keep them all.
   */
  readonly floodFailures: number;
}

const WINDOW_MS = SIGN_IN_FAILURE_WINDOW_MS;
const LOCK_MS = SIGN_IN_LOCK_MS;
/** Failures of a flood written at once: enough to keep a database's pool busy. */
const FLOOD_BATCH = 50;

const T0 = new Date(Date.UTC(2026, 0, 5, 9, 0, 0, 250));
const at = (ms: number): Date => new Date(T0.getTime() + ms);

const ADA: AdminAccount = { id: 'a'.repeat(24), partnerId: 'acme', email: 'ada@acme.example', passwordHash: 'scrypt$1$1$1$c2FsdA$aGFzaA', createdAt: T0 };

function session(idHash: string): AdminSession {
  return { idHash, adminId: ADA.id, partnerId: 'acme', email: ADA.email, csrfToken: 'csrf-'.padEnd(43, 'x'), createdAt: T0, lastSeenAt: T0 };
}

/** Every adapter set for the portal's state must pass these. */
export function adminStoreContract(adapterName: string, factory: AdminStoreFactory, options: AdminStoreContractOptions): void {
  describe(`admin store contract: ${adapterName}`, function () {
    let s: AdminStoreUnderTest;

    beforeEach(async function () {
      s = await factory();
    });

    it('stores an account by email, once', async function () {
      expect(await s.accounts.create(ADA)).to.equal(true);
      expect(await s.accounts.findByEmail('ada@acme.example')).to.deep.equal(ADA);
      expect(await s.accounts.create({ ...ADA, id: 'b'.repeat(24), partnerId: 'globex' })).to.equal(false);
      expect(await s.accounts.findByEmail('ada@acme.example')).to.deep.equal(ADA);
      expect(await s.accounts.findByEmail('eve@acme.example')).to.equal(null);
    });

    it('lets an invitation be used once, and not after it expires', async function () {
      const invitation = { tokenHash: '1'.repeat(64), partnerId: 'acme', email: 'ada@acme.example', createdAt: T0, expiresAt: at(1_000), usedAt: null };
      await s.invitations.save(invitation);
      await s.invitations.save({ ...invitation, tokenHash: '2'.repeat(64) });
      expect(await s.invitations.find('1'.repeat(64))).to.deep.equal(invitation);
      expect(await s.invitations.find('3'.repeat(64))).to.equal(null);
      expect(await s.invitations.use('1'.repeat(64), at(999))).to.equal(true);
      expect(await s.invitations.use('1'.repeat(64), at(999))).to.equal(false);
      expect((await s.invitations.find('1'.repeat(64)))?.usedAt).to.deep.equal(at(999));
      expect(await s.invitations.use('2'.repeat(64), at(1_000))).to.equal(false);
      expect(await s.invitations.use('3'.repeat(64), at(0))).to.equal(false);
    });

    it('keeps sessions by id hash: found, touched, deleted', async function () {
      await s.accounts.create(ADA);
      await s.sessions.create(session('4'.repeat(64)));
      await s.sessions.create(session('5'.repeat(64)));
      expect(await s.sessions.find('4'.repeat(64))).to.deep.equal(session('4'.repeat(64)));
      await s.sessions.touch('4'.repeat(64), at(30_000));
      expect((await s.sessions.find('4'.repeat(64)))?.lastSeenAt).to.deep.equal(at(30_000));
      await s.sessions.delete('4'.repeat(64));
      expect(await s.sessions.find('4'.repeat(64))).to.equal(null);
      expect(await s.sessions.find('5'.repeat(64))).to.not.equal(null);
    });

    it('counts an email\'s failures since a time, locks it, and forgets both when cleared', async function () {
      expect(await s.throttle.recordFailure('ada@acme.example', at(0), at(-900_000))).to.equal(1);
      expect(await s.throttle.recordFailure('ada@acme.example', at(1_000), at(-899_000))).to.equal(2);
      expect(await s.throttle.recordFailure('eve@acme.example', at(1_000), at(-899_000))).to.equal(1);
      // The first failure is no longer after `since`.
      expect(await s.throttle.recordFailure('ada@acme.example', at(900_500), at(500))).to.equal(2);
      expect(await s.throttle.lockedUntil('ada@acme.example')).to.equal(null);
      await s.throttle.lock('ada@acme.example', at(1_800_000));
      expect(await s.throttle.lockedUntil('ada@acme.example')).to.deep.equal(at(1_800_000));
      // A lock starts the count afresh.
      expect(await s.throttle.recordFailure('ada@acme.example', at(900_600), at(600))).to.equal(1);
      await s.throttle.clear('ada@acme.example');
      expect(await s.throttle.lockedUntil('ada@acme.example')).to.equal(null);
      expect(await s.throttle.recordFailure('ada@acme.example', at(900_700), at(700))).to.equal(1);
      expect(await s.throttle.recordFailure('eve@acme.example', at(900_700), at(-899_000))).to.equal(2);
    });

    it('keeps a lock and failures that count through a flood of failures of other emails, and makes room only from what has ended', async function () {
      this.timeout(20_000);
      await s.throttle.lock('ada@acme.example', at(LOCK_MS));
      expect(await s.throttle.recordFailure('eve@acme.example', at(0), at(-WINDOW_MS))).to.equal(1);
      let full = 0;
      for (let first = 0; first < options.floodFailures; first += FLOOD_BATCH) {
        const batch = Array.from({ length: Math.min(FLOOD_BATCH, options.floodFailures - first) }, (_, i) => `flood-${first + i}@example.test`);
        for (const count of await Promise.all(batch.map((email) => s.throttle.recordFailure(email, at(1), at(1 - WINDOW_MS))))) {
          // Once one is refused, every new email is: room is never made from anything that still counts.
          if (full > 0) expect(count).to.equal('full');
          if (count === 'full') full += 1;
        }
      }
      process.stdout.write(`      ${adapterName}: ${options.floodFailures.toLocaleString('en')} failures of other emails, ${full.toLocaleString('en')} refused as full; the lock and the live failures kept\n`);
      expect(await s.throttle.lockedUntil('ada@acme.example')).to.deep.equal(at(LOCK_MS));
      expect(await s.throttle.recordFailure('eve@acme.example', at(2), at(2 - WINDOW_MS))).to.equal(2);
      // Once the window and the lock have ended, a new email has room again.
      expect(await s.throttle.recordFailure('late@acme.example', at(LOCK_MS + WINDOW_MS), at(LOCK_MS))).to.equal(1);
    });

    it('forgets, when pruned, failures out of the window and ended locks, and nothing that still counts', async function () {
      await s.throttle.recordFailure('old@acme.example', at(0), at(-WINDOW_MS));
      await s.throttle.recordFailure('mixed@acme.example', at(0), at(-WINDOW_MS));
      await s.throttle.recordFailure('mixed@acme.example', at(600_000), at(600_000 - WINDOW_MS));
      await s.throttle.lock('ended@acme.example', at(900_000));
      await s.throttle.lock('ada@acme.example', at(900_001));
      await s.throttle.prune(at(0), at(900_000));
      expect(await s.throttle.lockedUntil('ended@acme.example')).to.equal(null);
      expect(await s.throttle.lockedUntil('ada@acme.example')).to.deep.equal(at(900_001));
      // Counted since long before: only what the prune kept is there to count.
      expect(await s.throttle.recordFailure('old@acme.example', at(900_000), at(-WINDOW_MS))).to.equal(1);
      expect(await s.throttle.recordFailure('mixed@acme.example', at(900_000), at(-WINDOW_MS))).to.equal(2);
    });

    it('forgets, when pruned, the audit events from before a time', async function () {
      await s.audit.record({ at: at(1), partnerId: 'acme', adminEmail: 'ada@acme.example', action: 'admin.signed_in', keyId: null });
      await s.audit.record({ at: at(2), partnerId: 'acme', adminEmail: 'ada@acme.example', action: 'key.created', keyId: 'acme-k1' });
      await s.audit.record({ at: at(1), partnerId: 'globex', adminEmail: null, action: 'key.created', keyId: 'globex-k1' });
      await s.audit.prune(at(2));
      expect((await s.audit.list('acme', 10)).map((e) => e.action)).to.deep.equal(['key.created']);
      expect(await s.audit.list('globex', 10)).to.deep.equal([]);
    });

    it('lists a partner\'s audit events newest first, at most the limit, and no one else\'s', async function () {
      await s.audit.record({ at: at(1), partnerId: 'acme', adminEmail: 'ada@acme.example', action: 'admin.signed_in', keyId: null });
      await s.audit.record({ at: at(2), partnerId: 'acme', adminEmail: 'ada@acme.example', action: 'key.created', keyId: 'acme-k1' });
      await s.audit.record({ at: at(2), partnerId: 'globex', adminEmail: null, action: 'key.created', keyId: 'globex-k1' });
      await s.audit.record({ at: at(2), partnerId: 'acme', adminEmail: 'ada@acme.example', action: 'key.revoked', keyId: 'acme-k1' });
      expect(await s.audit.list('acme', 10)).to.deep.equal([
        { at: at(2), partnerId: 'acme', adminEmail: 'ada@acme.example', action: 'key.revoked', keyId: 'acme-k1' },
        { at: at(2), partnerId: 'acme', adminEmail: 'ada@acme.example', action: 'key.created', keyId: 'acme-k1' },
        { at: at(1), partnerId: 'acme', adminEmail: 'ada@acme.example', action: 'admin.signed_in', keyId: null },
      ]);
      expect((await s.audit.list('acme', 2)).map((e) => e.action)).to.deep.equal(['key.revoked', 'key.created']);
      expect((await s.audit.list('globex', 10)).map((e) => e.keyId)).to.deep.equal(['globex-k1']);
    });
  });
}
