import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort, onLoadCore } from './server-process.js';

const SHARED_REDIS_URL = 'redis://127.0.0.1:6379';
/** What the service writes in Redis for the bench catalog: the counters of its keys (ids `bench-<n>`) and the version tokens. */
const COUNTERS = 'pcat:rl:bench-*';
const VERSION_TOKENS = 'pcat:{v}:*';
const SCAN_COUNT = 1_000;

/** Redis for the service's production settings: the service's environment for it, and how to remove what the bench left there. */
export interface BenchRedis {
  readonly env: Record<string, string>;
  /** Unlinks the bench keys' counters and the version tokens that were not there when it was opened, and disconnects. */
  cleanup(): Promise<void>;
}

/**
 * A redis-server of the bench's own, on the load generator's core when pinned: in production Redis
 * runs on a host of its own, and here it would otherwise take its CPU from the measured server's
 * core, as the load generator would if it were not pinned. BENCH_REDIS_URL names a Redis to use
 * instead; without redis-server on the PATH, the machine's Redis is used, unpinned.
 */
async function ownRedis(): Promise<{ url: string; child: ChildProcess | null }> {
  if (process.env.BENCH_REDIS_URL !== undefined) return { url: process.env.BENCH_REDIS_URL, child: null };
  if (spawnSync('redis-server', ['--version']).error !== undefined) return { url: SHARED_REDIS_URL, child: null };
  const port = await freePort();
  const [command, ...args] = onLoadCore(['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  const child = spawn(command!, args, { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  try {
    await untilRedisAnswers(url);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return { url, child };
}

/** Resolves once a redis-server just started at `url` answers PING; rejects after 5 s. */
export async function untilRedisAnswers(url: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      probe.disconnect();
    }
  }
}

/** Null, with a line saying why, when Redis cannot be reached. */
export async function openBenchRedis(purpose: string): Promise<BenchRedis | null> {
  const own = await ownRedis();
  const REDIS_URL = own.url;
  const client = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  let cause: Error | undefined;
  client.on('error', (error: Error) => {
    cause ??= error; // the socket's own error says more than the closed connection that follows it
  });
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    process.stdout.write(`bench: Redis at ${REDIS_URL} unreachable (${(cause ?? (error as Error)).message}); no ${purpose}\n`);
    client.disconnect();
    return null;
  }
  // Tokens another user of this Redis had stay; one it writes while the bench runs goes too, which
  // only makes its services read their keys and answers again.
  const tokensBefore = new Set(await scan(client, VERSION_TOKENS));
  return {
    env: { RATE_LIMIT_STORE: 'redis', REDIS_URL },
    cleanup: async () => {
      try {
        const tokens = (await scan(client, VERSION_TOKENS)).filter((key) => !tokensBefore.has(key));
        const doomed = [...tokens, ...(await scan(client, COUNTERS))];
        for (let i = 0; i < doomed.length; i += SCAN_COUNT) await client.unlink(...doomed.slice(i, i + SCAN_COUNT));
      } finally {
        client.disconnect();
        own.child?.kill('SIGKILL');
      }
    },
  };
}

async function scan(client: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}
