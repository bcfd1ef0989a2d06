import type { RedisRateLimiter } from '../src/adapters/redis/redis-rate-limiter.js';
import { createRedisRateLimiter } from '../test/support/redis-rate-limiter.js';
import { startSentinelTopology, until } from '../test/support/redis-topologies.js';

/*
 * How many requests of one key two instances admit in one window when Sentinel fails Redis over
 * part-way through it: two RedisRateLimiter objects on REDIS_SENTINELS (a primary, a replica, three
 * sentinels of this script's own), requests alternating between them, the primary killed (SIGKILL)
 * with the key half used, requests sent on until both count in the promoted replica, then many more.
 * Usage: npx tsx bench/redis-failover.ts [limit]
 */

const limit = Number(process.argv[2] ?? 100);
const windowMs = 60_000;

const topology = await startSentinelTopology();
const open = (): RedisRateLimiter => createRedisRateLimiter({
  target: { kind: 'sentinel', sentinels: topology.sentinels, name: topology.name, username: null, password: null, sentinelPassword: null, tls: false },
  limit,
  windowMs,
  coolDownMs: 100,
});
const instances = [open(), open()];
try {
  await Promise.all(instances.map((i) => i.ready()));
  let admitted = 0;
  let sent = 0;
  const send = async (): Promise<void> => {
    if ((await instances[sent % 2]!.consume('key')).allowed) admitted += 1;
    sent += 1;
  };
  // Both instances tell Redis they are there (at most once a second), and the key is half used.
  for (let n = 0; n < limit / 2; n += 1) await send();
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  await send();
  await send();
  const primaryPort = await topology.primaryPort();
  const killedAt = performance.now();
  await topology.servers.get(primaryPort)!.kill();
  let onShares = 0;
  await until('both instances counting in the promoted replica', async () => {
    await send();
    if (instances.some((i) => i.usingFallback())) onShares += 1;
    return (await topology.primaryPort()) !== primaryPort && instances.every((i) => !i.usingFallback());
  }, 100_000);
  const backAfterMs = performance.now() - killedAt;
  for (let n = 0; n < limit * 5; n += 1) await send();
  process.stdout.write(`limit ${limit} per ${windowMs / 1000} s window, 2 instances on Sentinel, the primary killed with the key half used\n`);
  process.stdout.write(`counting in Redis again ${(backAfterMs / 1000).toFixed(1)} s after the kill; ${onShares} requests meanwhile found an instance on its share\n`);
  process.stdout.write(`admitted in the window: ${admitted} of ${sent} (${(admitted / limit).toFixed(2)} x the limit)\n`);
} finally {
  await Promise.all(instances.map((i) => i.close()));
  await topology.close();
}
