import { expect } from 'chai';
import { PasswordHashGate } from '../../src/application/admin-sign-in/password-hash-gate.js';
import { SIGN_IN_BUSY_RETRY_AFTER_SECONDS } from '../../src/domain/admin.js';
import { adminRefusal } from '../support/portal-world.js';

/** Work that runs until the test ends it: what is running at any moment is known exactly. */
class HeldWork {
  readonly started: number[] = [];
  private readonly ends = new Map<number, () => void>();

  job(id: number): () => Promise<number> {
    return () => new Promise<number>((resolve) => {
      this.started.push(id);
      this.ends.set(id, () => resolve(id));
    });
  }

  end(id: number): void {
    this.ends.get(id)!();
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the password hash gate', function () {
  it('runs two at once by default, lets 32 wait, and refuses the next at once', async function () {
    const gate = new PasswordHashGate();
    const work = new HeldWork();
    const ids = Array.from({ length: 2 + 32 }, (_, i) => i + 1);
    const admitted = ids.map((id) => gate.run(work.job(id)));
    expect((await adminRefusal(gate.run(work.job(35)))).code).to.equal('sign_in_busy');
    expect(work.started).to.deep.equal([1, 2]);
    for (const id of ids) {
      await tick();
      work.end(id);
    }
    expect(await Promise.all(admitted)).to.deep.equal(ids);
  });

  it('runs at most `concurrent` at once, and the waiting ones in turn as each ends', async function () {
    const gate = new PasswordHashGate({ concurrent: 2, maxWaiting: 5, maxWaitMs: 10_000 });
    const work = new HeldWork();
    const results = [1, 2, 3, 4, 5].map((id) => gate.run(work.job(id)));
    await tick();
    expect(work.started).to.deep.equal([1, 2]);
    work.end(2);
    await tick();
    expect(work.started).to.deep.equal([1, 2, 3]);
    work.end(1);
    work.end(3);
    await tick();
    expect(work.started).to.deep.equal([1, 2, 3, 4, 5]);
    work.end(4);
    work.end(5);
    expect(await Promise.all(results)).to.deep.equal([1, 2, 3, 4, 5]);
  });

  it('refuses at once, as busy, a caller past the waiting room; the others still run', async function () {
    const gate = new PasswordHashGate({ concurrent: 1, maxWaiting: 2, maxWaitMs: 10_000 });
    const work = new HeldWork();
    const admitted = [1, 2, 3].map((id) => gate.run(work.job(id)));
    const refused = await adminRefusal(gate.run(work.job(4)));
    expect([refused.code, refused.retryAfterSeconds]).to.deep.equal(['sign_in_busy', SIGN_IN_BUSY_RETRY_AFTER_SECONDS]);
    expect(refused.message).to.equal('Signing in is busy. Try again in a few seconds.');
    for (const id of [1, 2, 3]) {
      await tick();
      work.end(id);
    }
    expect(await Promise.all(admitted)).to.deep.equal([1, 2, 3]);
    expect(work.started).to.deep.equal([1, 2, 3]);
  });

  it('refuses, as busy, a caller that waited its longest, and never runs its work; the gate goes on', async function () {
    const gate = new PasswordHashGate({ concurrent: 1, maxWaiting: 5, maxWaitMs: 20 });
    const work = new HeldWork();
    const first = gate.run(work.job(1));
    expect((await adminRefusal(gate.run(work.job(2)))).code).to.equal('sign_in_busy');
    work.end(1);
    expect(await first).to.equal(1);
    const third = gate.run(work.job(3));
    await tick();
    work.end(3);
    expect(await third).to.equal(3);
    expect(work.started).to.deep.equal([1, 3]);
  });

  it('frees the place of work that fails', async function () {
    const gate = new PasswordHashGate({ concurrent: 1, maxWaiting: 1, maxWaitMs: 10_000 });
    const failing = gate.run(() => Promise.reject(new Error('scrypt failed')));
    const next = gate.run(() => Promise.resolve('ran'));
    expect(await failing.catch((error: unknown) => (error as Error).message)).to.equal('scrypt failed');
    expect(await next).to.equal('ran');
  });
});
