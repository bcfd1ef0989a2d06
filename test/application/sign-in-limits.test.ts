import { expect } from 'chai';
import { memoryAdminStore, type MemoryAdminStore } from '../../src/adapters/memory/memory-admin-store.js';
import { MemorySignInAddressBudget } from '../../src/adapters/memory/memory-sign-in-address-budget.js';
import { AcceptInvitation } from '../../src/application/admin-sign-in/accept-invitation.js';
import { PasswordHashGate, type PasswordHashLimits } from '../../src/application/admin-sign-in/password-hash-gate.js';
import { PruneAdminRecords } from '../../src/application/admin-sign-in/prune-admin-records.js';
import { SignIn } from '../../src/application/admin-sign-in/sign-in.js';
import type { SignInThrottle } from '../../src/application/admin-sign-in/sign-in-throttle.js';
import type { AdminError } from '../../src/domain/admin-errors.js';
import {
  AUDIT_RETENTION_MS, hashToken, randomToken, SIGN_IN_ADDRESS_ALLOWANCE, SIGN_IN_BUSY_RETRY_AFTER_SECONDS, SIGN_IN_FAILURE_WINDOW_MS, SIGN_IN_FAILURES_TO_LOCK, SIGN_IN_LOCK_MS,
  type AttemptAllowance,
} from '../../src/domain/admin.js';
import { hashPassword, MAX_PASSWORD_LENGTH, PASSWORD_HASH_LIMITS } from '../../src/domain/password.js';
import { adminRefusal, ManualClock } from '../support/portal-world.js';

const PASSWORD = 'correct horse battery staple';
const ADA = 'ada@acme.example';
const WINDOW_MS = SIGN_IN_ADDRESS_ALLOWANCE.windowMs;

interface Portal {
  readonly clock: ManualClock;
  readonly admin: MemoryAdminStore;
  readonly signIn: SignIn;
  readonly accept: AcceptInvitation;
}

/** A throttle that can hold the next count until the email has been locked: the interleaving a loaded machine gives at random. */
class HeldThrottle implements SignInThrottle {
  holdNextCount = false;
  private locked = (): void => undefined;
  private readonly lockSet = new Promise<void>((resolve) => {
    this.locked = resolve;
  });

  constructor(private readonly inner: SignInThrottle) {}

  lockedUntil(email: string): Promise<Date | null> {
    return this.inner.lockedUntil(email);
  }

  async recordFailure(email: string, at: Date, since: Date): Promise<number | 'full'> {
    if (this.holdNextCount) {
      this.holdNextCount = false;
      await this.lockSet;
    }
    return this.inner.recordFailure(email, at, since);
  }

  async lock(email: string, until: Date): Promise<void> {
    await this.inner.lock(email, until);
    this.locked();
  }

  clear(email: string): Promise<void> {
    return this.inner.clear(email);
  }

  prune(since: Date, now: Date): Promise<void> {
    return this.inner.prune(since, now);
  }
}

/** Every macrotask's worth of promises settled: a use case started before has reached its hash. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('signing in under a flood, on the memory adapters', function () {
  this.timeout(30_000);
  let adaHash: string;

  before(async function () {
    adaHash = await hashPassword(PASSWORD);
  });

  /** Ada's account, and the sign-in and invitation use cases with the limits given (the defaults otherwise). */
  async function portal(options: { allowance?: AttemptAllowance; hashes?: PasswordHashLimits; maxThrottledEmails?: number } = {}): Promise<Portal> {
    const clock = new ManualClock();
    const admin = memoryAdminStore(options.maxThrottledEmails === undefined ? {} : { maxThrottledEmails: options.maxThrottledEmails });
    await admin.accounts.create({ id: 'a'.repeat(24), partnerId: 'acme', email: ADA, passwordHash: adaHash, createdAt: new Date(clock.now()) });
    // Unless a test is about the gate's wait, no caller is refused for having waited: a loaded machine hashes slowly.
    const hashes = new PasswordHashGate(options.hashes ?? { ...PASSWORD_HASH_LIMITS, maxWaitMs: 600_000 });
    return {
      clock,
      admin,
      signIn: new SignIn(admin.accounts, admin.sessions, admin.throttle, admin.audit, clock, new MemorySignInAddressBudget(), hashes, options.allowance),
      accept: new AcceptInvitation(admin.invitations, admin.accounts, admin.sessions, admin.audit, clock, hashes),
    };
  }

  const refusal = (p: Portal, address: string, email: string, password = 'wrong password!'): Promise<AdminError> =>
    adminRefusal(p.signIn.execute({ email, password, address }));
  const signsIn = async (p: Portal, address: string): Promise<string> => (await p.signIn.execute({ email: ADA, password: PASSWORD, address })).session.email;
  /** How many failures the email has counted, this one included: 1 when nothing was counted before. */
  const countedFor = async (p: Portal, email: string): Promise<number | 'full'> =>
    p.admin.throttle.recordFailure(email, new Date(p.clock.now()), new Date(p.clock.now() - SIGN_IN_FAILURE_WINDOW_MS));
  const tally = (refusals: AdminError[]): Record<string, number> =>
    refusals.reduce<Record<string, number>>((counts, r) => ({ ...counts, [r.code]: (counts[r.code] ?? 0) + 1 }), {});

  describe('the allowance of each client address', function () {
    it('is so many attempts per 15 minutes per IPv4 address or IPv6 /64, the next refused before anything is tried', async function () {
      const p = await portal({ allowance: { attempts: 3, windowMs: WINDOW_MS, atOnce: 16 } });
      const failed = await Promise.all([1, 2, 3].map((i) => refusal(p, '192.0.2.1', `user${i}@acme.example`)));
      expect(failed.map((r) => r.code)).to.deep.equal(['sign_in_failed', 'sign_in_failed', 'sign_in_failed']);
      const refused = await refusal(p, '192.0.2.1', ADA, PASSWORD);
      expect([refused.code, refused.retryAfterSeconds, refused.message])
        .to.deep.equal(['sign_in_throttled', 900, 'Too many failed sign-ins from your network. Try again in 15 minutes.']);
      expect((await refusal(p, '::ffff:192.0.2.1', 'user4@acme.example')).code).to.equal('sign_in_throttled');
      // Refused before the lockout table was touched: the email has nothing counted.
      expect(await countedFor(p, 'user4@acme.example')).to.equal(1);
      expect(await signsIn(p, '192.0.2.2')).to.equal(ADA);

      const failedV6 = await Promise.all(['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:aaaa:bbbb:cccc:dddd'].map((address) => refusal(p, address, 'v6@acme.example')));
      expect(failedV6.map((r) => r.code)).to.deep.equal(['sign_in_failed', 'sign_in_failed', 'sign_in_failed']);
      expect((await refusal(p, '2001:db8:1:2::ffff', ADA, PASSWORD)).code).to.equal('sign_in_throttled');
      expect(await signsIn(p, '2001:db8:1:3::1')).to.equal(ADA);

      p.clock.advance(WINDOW_MS - 1_000);
      expect((await refusal(p, '192.0.2.1', ADA, PASSWORD)).retryAfterSeconds).to.equal(1);
      p.clock.advance(1_000);
      expect(await signsIn(p, '192.0.2.1')).to.equal(ADA);
    });

    it('is taken before the hash: of 16 concurrent attempts from one address, exactly the allowance are tried', async function () {
      const allowance = { attempts: 4, windowMs: WINDOW_MS, atOnce: 16 };
      const p = await portal({ allowance });
      const emails = Array.from({ length: 16 }, (_, i) => `flood${i}@acme.example`);
      const refusals = await Promise.all(emails.map((email) => refusal(p, '198.51.100.7', email)));
      process.stdout.write(`        16 concurrent sign-ins from one address, allowance ${allowance.attempts}: ${JSON.stringify(tally(refusals))}\n`);
      expect(tally(refusals)).to.deep.equal({ sign_in_failed: 4, sign_in_throttled: 12 });
      // The refused ones were never tried: none of their emails has a failure counted.
      const throttled = emails.filter((_, i) => refusals[i]!.code === 'sign_in_throttled');
      expect(await Promise.all(throttled.map((email) => countedFor(p, email)))).to.deep.equal(throttled.map(() => 1));
    });

    it(`lets an address have ${SIGN_IN_ADDRESS_ALLOWANCE.atOnce} attempts under way at once, so its flood never queues ahead of another address`, async function () {
      const p = await portal();
      const emails = Array.from({ length: 16 }, (_, i) => `burst${i}@acme.example`);
      const burst = Promise.all(emails.map((email) => refusal(p, '198.51.100.9', email)));
      // Another address's admin, asking while the burst is under way, waits behind two hashes at most.
      const [refusals, admin] = await Promise.all([burst, signsIn(p, '198.51.100.10')]);
      process.stdout.write(`        16 concurrent sign-ins from one address: ${JSON.stringify(tally(refusals))}\n`);
      expect(tally(refusals)).to.deep.equal({ sign_in_failed: SIGN_IN_ADDRESS_ALLOWANCE.atOnce, sign_in_throttled: 16 - SIGN_IN_ADDRESS_ALLOWANCE.atOnce });
      const atOnce = refusals.find((r) => r.code === 'sign_in_throttled')!;
      expect([atOnce.retryAfterSeconds, atOnce.message]).to.deep.equal([1, 'Too many sign-ins at once from your network. Try again in a moment.']);
      expect(admin).to.equal(ADA);
      // The attempts refused for being too many at once took nothing from the allowance.
      expect((await refusal(p, '198.51.100.9', 'later@acme.example')).code).to.equal('sign_in_failed');
    });

    it('is given back by a successful sign-in', async function () {
      const p = await portal({ allowance: { attempts: 2, windowMs: WINDOW_MS, atOnce: 16 } });
      expect((await refusal(p, '192.0.2.1', 'eve@acme.example')).code).to.equal('sign_in_failed');
      for (let i = 0; i < 3; i += 1) expect(await signsIn(p, '192.0.2.1')).to.equal(ADA);
      expect((await refusal(p, '192.0.2.1', 'eve@acme.example')).code).to.equal('sign_in_failed');
      expect((await refusal(p, '192.0.2.1', ADA, PASSWORD)).code).to.equal('sign_in_throttled');
    });
  });

  describe('the hashes', function () {
    it('run a few at once: past the waiting room a sign-in is refused as busy at once, taking nothing from its address or its email', async function () {
      const p = await portal({ allowance: { attempts: 1, windowMs: WINDOW_MS, atOnce: 16 }, hashes: { concurrent: 1, maxWaiting: 1, maxWaitMs: 10_000 } });
      const running = refusal(p, '192.0.2.1', 'one@acme.example');
      const waiting = refusal(p, '192.0.2.2', 'two@acme.example');
      const busy = await refusal(p, '192.0.2.3', 'three@acme.example');
      expect([busy.code, busy.retryAfterSeconds, busy.message]).to.deep.equal(['sign_in_busy', SIGN_IN_BUSY_RETRY_AFTER_SECONDS, 'Signing in is busy. Try again in a few seconds.']);
      expect((await Promise.all([running, waiting])).map((r) => r.code)).to.deep.equal(['sign_in_failed', 'sign_in_failed']);
      // Its one attempt and its email's count are whole: the next try is a plain failure, counted once.
      expect((await refusal(p, '192.0.2.3', 'three@acme.example')).code).to.equal('sign_in_failed');
      expect(await countedFor(p, 'three@acme.example')).to.equal(2);
    });

    it('are waited for briefly: a sign-in that waited its longest is refused as busy', async function () {
      const p = await portal({ hashes: { concurrent: 1, maxWaiting: 5, maxWaitMs: 10 } });
      const refusals = await Promise.all([refusal(p, '192.0.2.1', 'one@acme.example'), refusal(p, '192.0.2.2', 'two@acme.example')]);
      expect(refusals.map((r) => r.code)).to.deep.equal(['sign_in_failed', 'sign_in_busy']);
    });

    it('of a new password wait at the same gate: an invitation accepted while it is full is refused as busy, and still good after', async function () {
      const p = await portal({ hashes: { concurrent: 1, maxWaiting: 0, maxWaitMs: 10_000 } });
      const token = randomToken();
      const createdAt = new Date(p.clock.now());
      await p.admin.invitations.save({ tokenHash: hashToken(token), partnerId: 'acme', email: 'bob@acme.example', createdAt, expiresAt: new Date(p.clock.now() + 3_600_000), usedAt: null });
      const signingIn = refusal(p, '192.0.2.1', ADA);
      await settled();
      expect((await adminRefusal(p.accept.execute({ token, password: PASSWORD, confirmation: PASSWORD }))).code).to.equal('sign_in_busy');
      expect((await signingIn).code).to.equal('sign_in_failed');
      expect((await p.accept.execute({ token, password: PASSWORD, confirmation: PASSWORD })).session.email).to.equal('bob@acme.example');
    });
  });

  describe('a password too long', function () {
    it('costs a hash and counts as a failure like any wrong one, even when it starts with the right password', async function () {
      const p = await portal({ hashes: { concurrent: 1, maxWaiting: 0, maxWaitMs: 10_000 } });
      const long = `${PASSWORD}${'!'.repeat(MAX_PASSWORD_LENGTH)}`;
      const hashing = refusal(p, '192.0.2.1', ADA, long);
      await settled();
      // It holds the one hash there is room for.
      expect((await refusal(p, '192.0.2.2', 'eve@acme.example')).code).to.equal('sign_in_busy');
      expect((await hashing).code).to.equal('sign_in_failed');
      for (let i = 0; i < 4; i += 1) expect((await refusal(p, '192.0.2.1', ADA, long)).code).to.equal('sign_in_failed');
      expect((await refusal(p, '192.0.2.1', ADA, PASSWORD)).code).to.equal('sign_in_locked');
    });

    it('takes as long to refuse as an unknown email or a wrong password (figures printed, not asserted)', async function () {
      const p = await portal();
      // Bea's account takes the long ones, so three rounds lock no one.
      await p.admin.accounts.create({ id: 'b'.repeat(24), partnerId: 'acme', email: 'bea@acme.example', passwordHash: adaHash, createdAt: new Date(p.clock.now()) });
      const kinds = {
        'unknown email': ['nobody@acme.example', PASSWORD],
        'wrong password': [ADA, 'wrong password!'],
        [`${MAX_PASSWORD_LENGTH + 1} characters`]: ['bea@acme.example', 'x'.repeat(MAX_PASSWORD_LENGTH + 1)],
      } as const;
      // The dummy hash is made on first use: not part of any one refusal.
      await refusal(p, '192.0.2.9', 'nobody@acme.example');
      const times = new Map<string, number[]>();
      for (let round = 0; round < 3; round += 1) {
        for (const [kind, [email, password]] of Object.entries(kinds)) {
          const started = performance.now();
          expect((await refusal(p, `192.0.2.${round + 10}`, email, password)).code).to.equal('sign_in_failed');
          times.set(kind, [...(times.get(kind) ?? []), performance.now() - started]);
        }
      }
      const median = (values: number[]): number => [...values].sort((a, b) => a - b)[1]!;
      process.stdout.write(`        refused in (median of 3): ${[...times].map(([kind, ms]) => `${kind} ${median(ms).toFixed(0)} ms (${ms.map((v) => v.toFixed(0)).join(' ')})`).join(', ')}\n`);
    });
  });

  describe('the lockout', function () {
    it('counts concurrent attempts for one email before hashing them: of 8 at once, 5 are tried and the rest find it locked', async function () {
      // The lockout is counted here, not the wait bound: on a loaded machine five hashes two at a time can outlast 2 s.
      const p = await portal({ hashes: { ...PASSWORD_HASH_LIMITS, maxWaitMs: 60_000 } });
      const refusals = await Promise.all(Array.from({ length: 8 }, (_, i) => refusal(p, `192.0.2.${i + 1}`, ADA, `wrong password ${i}`)));
      expect(tally(refusals)).to.deep.equal({ sign_in_failed: 5, sign_in_locked: 3 });
      const locked = await refusal(p, '192.0.2.9', ADA, PASSWORD);
      expect([locked.code, locked.retryAfterSeconds]).to.deep.equal(['sign_in_locked', SIGN_IN_LOCK_MS / 1000]);
    });

    it('stops an attempt counted after a lock that forgot the failures before it: its password is not tried', async function () {
      const p = await portal();
      for (let i = 0; i < SIGN_IN_FAILURES_TO_LOCK - 1; i += 1) expect((await refusal(p, `192.0.2.${i + 1}`, ADA)).code).to.equal('sign_in_failed');
      // The right password, already past the lock check, counted only once the fifth failure has locked the email.
      const held = new HeldThrottle(p.admin.throttle);
      const signIn = new SignIn(p.admin.accounts, p.admin.sessions, held, p.admin.audit, p.clock, new MemorySignInAddressBudget(), new PasswordHashGate());
      held.holdNextCount = true;
      const late = adminRefusal(signIn.execute({ email: ADA, password: PASSWORD, address: '192.0.2.20' }));
      await settled();
      // The fifth failure: refused as failed, and the email locked.
      expect((await adminRefusal(signIn.execute({ email: ADA, password: 'wrong password!', address: '192.0.2.21' }))).code).to.equal('sign_in_failed');
      const refused = await late;
      expect([refused.code, refused.retryAfterSeconds]).to.deep.equal(['sign_in_locked', SIGN_IN_LOCK_MS / 1000]);
    });

    it('is never forgotten to make room: with the table full, an email it does not track is refused as busy, and a locked one stays locked', async function () {
      const p = await portal({ maxThrottledEmails: 4 });
      const failures = await Promise.all(Array.from({ length: 5 }, (_, i) => refusal(p, `192.0.2.${10 + i}`, ADA, `wrong password ${i}`)));
      expect(tally(failures)).to.deep.equal({ sign_in_failed: 5 });
      const others = await Promise.all(['eve', 'x1', 'x2'].map((name, i) => refusal(p, `192.0.2.${20 + i}`, `${name}@acme.example`)));
      expect(tally(others)).to.deep.equal({ sign_in_failed: 3 });
      const busy = await refusal(p, '192.0.2.3', 'new@acme.example', PASSWORD);
      expect([busy.code, busy.retryAfterSeconds]).to.deep.equal(['sign_in_busy', SIGN_IN_BUSY_RETRY_AFTER_SECONDS]);
      expect((await refusal(p, '192.0.2.3', ADA, PASSWORD)).code).to.equal('sign_in_locked');
      // An email it tracks is still counted.
      expect((await refusal(p, '192.0.2.3', 'eve@acme.example')).code).to.equal('sign_in_failed');
      expect(await countedFor(p, 'eve@acme.example')).to.equal(3);
      // Room comes from what ends: the lock and the failures' window.
      p.clock.advance(Math.max(SIGN_IN_LOCK_MS, SIGN_IN_FAILURE_WINDOW_MS));
      expect((await refusal(p, '192.0.2.3', 'new@acme.example')).code).to.equal('sign_in_failed');
      expect(await signsIn(p, '192.0.2.3')).to.equal(ADA);
    });
  });

  it('forgets, when pruned, the failures out of their window and the audit events past their retention', async function () {
    const p = await portal();
    await p.admin.audit.record({ at: new Date(p.clock.now()), partnerId: 'acme', adminEmail: ADA, action: 'admin.signed_in', keyId: null });
    await countedFor(p, 'eve@acme.example');
    p.clock.advance(AUDIT_RETENTION_MS + 1);
    await p.admin.audit.record({ at: new Date(p.clock.now()), partnerId: 'acme', adminEmail: ADA, action: 'key.created', keyId: 'acme-k1' });
    await new PruneAdminRecords(p.admin.throttle, p.admin.audit, p.clock).execute();
    expect((await p.admin.audit.list('acme', 10)).map((e) => e.action)).to.deep.equal(['key.created']);
    expect(await p.admin.throttle.recordFailure('eve@acme.example', new Date(p.clock.now()), new Date(0))).to.equal(1);
  });
});
