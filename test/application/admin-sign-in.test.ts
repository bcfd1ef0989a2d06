import { expect } from 'chai';
import { MemorySignInAddressBudget } from '../../src/adapters/memory/memory-sign-in-address-budget.js';
import { AcceptInvitation } from '../../src/application/admin-sign-in/accept-invitation.js';
import { CheckInvitation } from '../../src/application/admin-sign-in/check-invitation.js';
import { InviteAdmin } from '../../src/application/admin-sign-in/invite-admin.js';
import { PasswordHashGate } from '../../src/application/admin-sign-in/password-hash-gate.js';
import { ResumeSession } from '../../src/application/admin-sign-in/resume-session.js';
import { SignIn } from '../../src/application/admin-sign-in/sign-in.js';
import { SignOut } from '../../src/application/admin-sign-in/sign-out.js';
import { SIGN_IN_FAILED_MESSAGE } from '../../src/domain/admin-errors.js';
import { hashToken, INVITATION_LIFETIME_MS, SESSION_IDLE_MS, SIGN_IN_LOCK_MS } from '../../src/domain/admin.js';
import { hashPassword, verifyPassword } from '../../src/domain/password.js';
import { adminRefusal, memoryPortalWorld, type PortalWorld } from '../support/portal-world.js';

const PASSWORD = 'correct horse battery staple';
const ADDRESS = '192.0.2.10';

describe('admin accounts, invitations and sessions, on the memory adapters', function () {
  this.timeout(30_000);
  let world: PortalWorld;
  let invite: InviteAdmin;
  let accept: AcceptInvitation;
  let signIn: SignIn;
  let resume: ResumeSession;

  beforeEach(async function () {
    world = await memoryPortalWorld();
    const { accounts, invitations, sessions, throttle, audit } = world.admin;
    invite = new InviteAdmin(world.keys, accounts, invitations, world.clock);
    const hashes = new PasswordHashGate();
    accept = new AcceptInvitation(invitations, accounts, sessions, audit, world.clock, hashes);
    signIn = new SignIn(accounts, sessions, throttle, audit, world.clock, new MemorySignInAddressBudget(), hashes);
    resume = new ResumeSession(sessions, world.clock);
  });

  const invited = async (email = 'Ada@Acme.example') => (await invite.execute({ partnerId: 'acme', email })).token;
  const account = async (): Promise<void> => {
    await accept.execute({ token: await invited(), password: PASSWORD, confirmation: PASSWORD });
  };

  describe('a password', function () {
    it('is stored as a salted scrypt hash that verifies only the same password, different each time', async function () {
      const [one, two] = await Promise.all([hashPassword(PASSWORD), hashPassword(PASSWORD)]);
      expect(one).to.match(/^scrypt\$32768\$8\$3\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
      expect(one).to.not.equal(two);
      expect(one).to.not.include(PASSWORD);
      expect(await verifyPassword(PASSWORD, one)).to.equal(true);
      expect(await verifyPassword(`${PASSWORD}.`, one)).to.equal(false);
      expect(await verifyPassword(PASSWORD, 'not a hash')).to.equal(false);
    });
  });

  describe('an invitation', function () {
    it('is for an existing partner and a plausible email, expires 72 hours on, and stores only its token\'s hash', async function () {
      const issued = await invite.execute({ partnerId: 'acme', email: ' Ada@Acme.example ' });
      expect(issued).to.include({ partner: 'acme', email: 'ada@acme.example' });
      expect(issued.expiresAt.getTime() - world.clock.now()).to.equal(INVITATION_LIFETIME_MS);
      expect(await world.admin.invitations.find(issued.token)).to.equal(null);
      expect(await world.admin.invitations.find(hashToken(issued.token))).to.deep.include({ partnerId: 'acme', usedAt: null });
      expect((await adminRefusal(invite.execute({ partnerId: 'nobody', email: 'a@b.example' }))).code).to.equal('partner_not_found');
      expect((await adminRefusal(invite.execute({ partnerId: 'acme', email: 'not an email' }))).code).to.equal('invalid_email');
    });

    it('creates the account and a session once; a second use and an expired one are refused alike', async function () {
      const token = await invited();
      const started = await accept.execute({ token, password: PASSWORD, confirmation: PASSWORD });
      expect(started.session).to.include({ partnerId: 'acme', email: 'ada@acme.example' });
      expect(await resume.execute({ sessionId: started.sessionId })).to.deep.include({ partnerId: 'acme' });
      const reused = await adminRefusal(accept.execute({ token, password: PASSWORD, confirmation: PASSWORD }));
      expect(reused.code).to.equal('invalid_invitation');
      const late = await invited('bob@acme.example');
      world.clock.advance(INVITATION_LIFETIME_MS);
      const expired = await adminRefusal(new CheckInvitation(world.admin.invitations, world.clock).execute({ token: late }));
      expect(expired.code).to.equal('invalid_invitation');
      expect(expired.message).to.equal(reused.message);
      expect((await adminRefusal(accept.execute({ token: late, password: PASSWORD, confirmation: PASSWORD }))).code).to.equal('invalid_invitation');
      expect(await world.admin.accounts.findByEmail('bob@acme.example')).to.equal(null);
    });

    it('refuses a short or unconfirmed password without using the invitation up', async function () {
      const token = await invited();
      expect((await adminRefusal(accept.execute({ token, password: 'elevenchars', confirmation: 'elevenchars' }))).code).to.equal('password_too_short');
      expect((await adminRefusal(accept.execute({ token, password: PASSWORD, confirmation: `${PASSWORD} ` }))).code).to.equal('passwords_differ');
      await accept.execute({ token, password: 'twelve chars', confirmation: 'twelve chars' });
    });

    it('is refused for an email that has an account already', async function () {
      await account();
      expect((await adminRefusal(invite.execute({ partnerId: 'globex', email: 'ada@acme.example' }))).code).to.equal('admin_exists');
    });
  });

  describe('signing in', function () {
    it('gives one answer for an unknown email and a wrong password, logging admin.sign_in_failed', async function () {
      await account();
      const unknown = await adminRefusal(signIn.execute({ address: ADDRESS, email: 'eve@acme.example', password: PASSWORD }));
      const wrong = await adminRefusal(signIn.execute({ address: ADDRESS, email: 'ada@acme.example', password: 'wrong password!' }));
      expect([unknown.code, unknown.message]).to.deep.equal(['sign_in_failed', SIGN_IN_FAILED_MESSAGE]);
      expect([wrong.code, wrong.message]).to.deep.equal(['sign_in_failed', SIGN_IN_FAILED_MESSAGE]);
      const events = await world.admin.audit.list('acme', 10);
      expect(events.map((e) => [e.action, e.adminEmail])).to.deep.equal([['admin.sign_in_failed', 'ada@acme.example'], ['admin.signed_in', 'ada@acme.example']]);
      expect(JSON.stringify(events)).to.not.include('wrong password');
    });

    it('rotates the session: a new id at each sign-in, the one it replaces ended', async function () {
      const token = await invited();
      const first = await accept.execute({ token, password: PASSWORD, confirmation: PASSWORD });
      const second = await signIn.execute({ address: ADDRESS, email: 'ADA@acme.example', password: PASSWORD, replacingSession: first.sessionId });
      expect(second.sessionId).to.not.equal(first.sessionId);
      expect(second.session.csrfToken).to.not.equal(first.session.csrfToken);
      expect(await resume.execute({ sessionId: first.sessionId })).to.equal(null);
      expect(await resume.execute({ sessionId: second.sessionId })).to.not.equal(null);
    });

    it('locks an email for 15 minutes after five failures within 15 minutes, even for the right password, then lets it in', async function () {
      await account();
      for (let i = 0; i < 5; i += 1) {
        world.clock.advance(60_000);
        expect((await adminRefusal(signIn.execute({ address: ADDRESS, email: 'ada@acme.example', password: `wrong ${i} password` }))).code).to.equal('sign_in_failed');
      }
      const sixth = await adminRefusal(signIn.execute({ address: ADDRESS, email: 'ada@acme.example', password: PASSWORD }));
      expect(sixth.code).to.equal('sign_in_locked');
      expect(sixth.message).to.equal('Too many failed sign-ins for this email. Try again in 15 minutes.');
      expect(sixth.retryAfterSeconds).to.equal(SIGN_IN_LOCK_MS / 1000);
      world.clock.advance(SIGN_IN_LOCK_MS - 1);
      expect((await adminRefusal(signIn.execute({ address: ADDRESS, email: 'ada@acme.example', password: PASSWORD }))).code).to.equal('sign_in_locked');
      world.clock.advance(1);
      expect((await signIn.execute({ address: ADDRESS, email: 'ada@acme.example', password: PASSWORD })).session.email).to.equal('ada@acme.example');
    });

    it('does not lock for five failures spread over more than 15 minutes, and locks an unknown email alike', async function () {
      await account();
      for (let i = 0; i < 5; i += 1) {
        world.clock.advance(4 * 60_000);
        await adminRefusal(signIn.execute({ address: ADDRESS, email: 'ada@acme.example', password: 'wrong password!' }));
        await adminRefusal(signIn.execute({ address: ADDRESS, email: 'nobody@acme.example', password: 'wrong password!' }));
      }
      // The first failure fell out of the window: four in the last 15 minutes.
      expect((await signIn.execute({ address: ADDRESS, email: 'ada@acme.example', password: PASSWORD })).session.partnerId).to.equal('acme');
      // The unknown email has four in the window too: one more locks it, and the next is refused as locked.
      expect((await adminRefusal(signIn.execute({ address: ADDRESS, email: 'nobody@acme.example', password: 'x' }))).code).to.equal('sign_in_failed');
      expect((await adminRefusal(signIn.execute({ address: ADDRESS, email: 'nobody@acme.example', password: 'x' }))).code).to.equal('sign_in_locked');
    });
  });

  describe('a session', function () {
    it('ends after the idle time, and at sign-out', async function () {
      await account();
      const { sessionId } = await signIn.execute({ address: ADDRESS, email: 'ada@acme.example', password: PASSWORD });
      world.clock.advance(SESSION_IDLE_MS - 1);
      expect(await resume.execute({ sessionId })).to.not.equal(null);
      // Each request restarts the idle time.
      world.clock.advance(SESSION_IDLE_MS - 1);
      expect(await resume.execute({ sessionId })).to.not.equal(null);
      world.clock.advance(SESSION_IDLE_MS);
      expect(await resume.execute({ sessionId })).to.equal(null);
      const again = await signIn.execute({ address: ADDRESS, email: 'ada@acme.example', password: PASSWORD });
      await new SignOut(world.admin.sessions).execute({ sessionId: again.sessionId });
      expect(await resume.execute({ sessionId: again.sessionId })).to.equal(null);
      expect(await resume.execute({ sessionId: 'made-up' })).to.equal(null);
    });
  });
});
