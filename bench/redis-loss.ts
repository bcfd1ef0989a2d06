import type { RedisRateLimiter } from '../src/adapters/redis/redis-rate-limiter.js';
import { createRedisRateLimiter } from '../test/support/redis-rate-limiter.js';
import { freePort, startRedisServer } from '../test/support/redis.js';
import { redisAt } from '../src/adapters/redis/redis-target.js';

/*
 * How many requests of one key two instances admit in one window when Redis is killed part-way
 * through it: two RedisRateLimiter objects on a redis-server of this script's own, limit 20,
 * requests alternating between them. One key is fresh when Redis goes, one is half used.
 * Usage: npx tsx bench/redis-loss.ts [limit]
 */

const limit = Number(process.argv[2] ?? 20);
const windowMs = 60_000;

const redis = await startRedisServer(await freePort());
const open = (): RedisRateLimiter => createRedisRateLimiter({
  target: redisAt(redis.url),
  limit,
  windowMs,
});
const instances = [open(), open()];
try {
  await Promise.all(instances.map((i) => i.ready()));
  const admitted = { fresh: 0, half: 0 };
  const send = async (key: 'fresh' | 'half', times: number): Promise<void> => {
    for (let n = 0; n < times; n += 1) {
      if ((await instances[n % 2]!.consume(key)).allowed) admitted[key] += 1;
    }
  };
  // Both instances have counted in Redis before it goes; the half-used key has used half its limit.
  await send('fresh', 0);
  await send('half', Math.floor(limit / 2));
  // Each instance tells Redis it is there at most once a second: both have seen the other by now.
  for (let round = 0; round < 2; round += 1) {
    await instances[0]!.consume('warm-up');
    await instances[1]!.consume('warm-up');
    if (round === 0) await new Promise((resolve) => setTimeout(resolve, 1_100));
  }
  await redis.kill();
  await send('fresh', limit * 10);
  await send('half', limit * 10);
  process.stdout.write(`limit ${limit} per ${windowMs / 1000} s window, 2 instances, Redis killed mid-window\n`);
  process.stdout.write(`fresh key:     ${admitted.fresh} admitted in the window (${(admitted.fresh / limit).toFixed(2)} x the limit)\n`);
  process.stdout.write(`half-used key: ${admitted.half} admitted in the window, ${Math.floor(limit / 2)} of them before the loss (${(admitted.half / limit).toFixed(2)} x the limit)\n`);
} finally {
  await Promise.all(instances.map((i) => i.close()));
  await redis.kill();
}
