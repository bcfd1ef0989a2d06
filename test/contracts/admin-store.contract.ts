import { expect } from 'chai';
import type { AdminAccounts } from '../../src/application/ports/admin-accounts.js';
import type { AdminSessions } from '../../src/application/ports/admin-sessions.js';
import type { AuditLog } from '../../src/application/ports/audit-log.js';
import type { Invitations } from '../../src/application/ports/invitations.js';
import type { SignInThrottle } from '../../src/application/ports/sign-in-throttle.js';
import type { AdminAccount, AdminSession } from '../../src/domain/admin.js';

export interface AdminStoreUnderTest {
  readonly accounts: AdminAccounts;
  readonly invitations: Invitations;
  readonly sessions: AdminSessions;
  readonly throttle: SignInThrottle;
  readonly audit: AuditLog;
}

/** Called per test: empty portal state beside the fixture's partners (acme, globex). */
export type AdminStoreFactory = () => Promise<AdminStoreUnderTest>;

const T0 = new Date(Date.UTC(2026, 0, 5, 9, 0, 0, 250));
const at = (ms: number): Date => new Date(T0.getTime() + ms);

const ADA: AdminAccount = { id: 'a'.repeat(24), partnerId: 'acme', email: 'ada@acme.example', passwordHash: 'scrypt$1$1$1$c2FsdA$aGFzaA', createdAt: T0 };

function session(idHash: string): AdminSession {
  return { idHash, adminId: ADA.id, partnerId: 'acme', email: ADA.email, csrfToken: 'csrf-'.padEnd(43, 'x'), createdAt: T0, lastSeenAt: T0 };
}

/** Every adapter set for the portal's state must pass these. */
export function adminStoreContract(adapterName: string, factory: AdminStoreFactory): void {
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

    it('lists a partner\'s audit events newest first, at most the limit, and no one else\'s', async function () {
      await s.audit.record({ at: at(1), partnerId: 'acme', adminEmail: 'ada@acme.example', action: 'admin.signed_in', keyId: null });
      await s.audit.record({ at: at(2), partnerId: 'acme', adminEmail: 'ada@acme.example', action: 'key.created', keyId: 'acme-k1' });
      await s.audit.record({ at: at(2), partnerId: 'globex', adminEmail: null, action: 'key.created', keyId: 'globex-k1' });
      await s.audit.record({ at: at(2), partnerId: null, adminEmail: 'eve@acme.example', action: 'admin.sign_in_failed', keyId: null });
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
