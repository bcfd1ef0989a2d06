import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RateLimiter } from '../../src/application/access/rate-limiter.js';

export interface RateLimiterUnderTest {
  readonly limiter: RateLimiter;
  close(): Promise<void>;
}

/** A limiter with this many requests per window of `windowMs`, sharing no state with earlier ones. */
export type RateLimiterFactory = (options: { limit: number; windowMs: number }) => Promise<RateLimiterUnderTest>;

let keySerial = 0;
const freshKey = (): string => `contract-key-${process.pid}-${Date.now()}-${(keySerial += 1)}`;

/** Every RateLimiter adapter must pass these; they run in real time with short windows. */
export function rateLimiterContract(adapterName: string, factory: RateLimiterFactory): void {
  describe(`RateLimiter contract: ${adapterName}`, function () {
    const subjects: RateLimiterUnderTest[] = [];
    const make = async (limit: number, windowMs = 60_000): Promise<RateLimiter> => {
      const subject = await factory({ limit, windowMs });
      subjects.push(subject);
      return subject.limiter;
    };
    after(async function () {
      await Promise.all(subjects.map((s) => s.close()));
    });

    it('counts down from the limit and refuses the request after it', async function () {
      const limiter = await make(3);
      const key = freshKey();
      const statuses = [];
      for (let i = 0; i < 4; i += 1) statuses.push(await limiter.consume(key));
      expect(statuses.map((s) => [s.allowed, s.remaining])).to.deep.equal([[true, 2], [true, 1], [true, 0], [false, 0]]);
      for (const s of statuses) {
        expect(s.limit).to.equal(3);
        expect(s.resetSeconds).to.be.within(1, 60);
      }
    });

    it('keeps separate counts for separate keys', async function () {
      const limiter = await make(1);
      const [a, b] = [freshKey(), freshKey()];
      expect((await limiter.consume(a)).allowed).to.equal(true);
      expect((await limiter.consume(a)).allowed).to.equal(false);
      expect((await limiter.consume(b)).allowed).to.equal(true);
    });

    it('lets exactly the limit through when requests arrive at once', async function () {
      const limiter = await make(20);
      const key = freshKey();
      const statuses = await Promise.all(Array.from({ length: 50 }, () => limiter.consume(key)));
      expect(statuses.filter((s) => s.allowed)).to.have.length(20);
    });

    it('refills the whole window once it has ended, not before', async function () {
      const limiter = await make(2, 1_200);
      const key = freshKey();
      await limiter.consume(key);
      await limiter.consume(key);
      const refused = await limiter.consume(key);
      expect(refused.allowed).to.equal(false);
      expect(refused.resetSeconds).to.be.within(1, 2);
      await sleep(1_400);
      const after = await limiter.consume(key);
      expect(after).to.include({ allowed: true, remaining: 1 });
    });
  });
}
