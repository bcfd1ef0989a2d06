/**
 * Shows that the in-process rate limiter stays bounded: 1,000,000 distinct keys through a limiter
 * that tracks at most `maxKeys`, with RSS and heap read after each 100,000.
 */
import { MemoryRateLimiter } from '../src/adapters/memory/memory-rate-limiter.js';
import { systemClock } from '../src/application/ports/clock.js';

const MAX_KEYS = 100_000;
const DISTINCT_KEYS = 1_000_000;
const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(0);

const limiter = new MemoryRateLimiter({ limit: 100, clock: systemClock, maxKeys: MAX_KEYS });
process.stdout.write(`\nrate limiter, maxKeys ${MAX_KEYS}, ${DISTINCT_KEYS} distinct keys:\n| keys seen | RSS MB | heap used MB |\n|---|---|---|\n`);
for (let i = 1; i <= DISTINCT_KEYS; i += 1) {
  await limiter.consume(`key-${i}`);
  if (i % 100_000 === 0) {
    global.gc?.();
    const { rss, heapUsed } = process.memoryUsage();
    process.stdout.write(`| ${i} | ${mb(rss)} | ${mb(heapUsed)} |\n`);
  }
}
