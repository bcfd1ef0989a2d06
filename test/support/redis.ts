import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/** The machine's Redis (docs/architecture.md, tests); `.ci/run` makes sure it is up. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let reachable: Promise<boolean> | undefined;

/**
 * Skips the calling suite, with one loud line per run, when the machine's Redis is down;
 * under CI=true a missing Redis fails instead, so CI never passes by skipping.
 */
export async function requireRedis(context: Mocha.Context): Promise<void> {
  let firstAsk = false;
  if (reachable === undefined) {
    firstAsk = true;
    reachable = ping(TEST_REDIS_URL);
  }
  if (await reachable) return;
  const reason = `Redis is not reachable at ${TEST_REDIS_URL}`;
  if (process.env.CI === 'true') throw new Error(`${reason} (CI=true: Redis tests must run)`);
  if (firstAsk) process.stderr.write(`\n*** SKIPPING Redis tests: ${reason}. Start it: redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no ***\n\n`);
  context.skip();
}

async function ping(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, connectTimeout: 1_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** Deletes the keys under `prefix` only, leaving everyone else's alone. */
export async function deleteKeys(url: string, prefix: string): Promise<void> {
  const client = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000);
      if (keys.length > 0) await client.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await client.quit();
  }
}

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

/** A throwaway redis-server of this test's own, so it can be stopped and started at will. */
export interface RedisServerProcess {
  readonly url: string;
  /** SIGKILL, as a crash or a lost host would look. */
  kill(): Promise<void>;
  pause(): void;
  resume(): void;
}

/**
 * On `port`, or, without one, on a port nothing listens on: a port freePort found can be taken by
 * another process (a test file in another worker) before redis-server binds it, so a start that
 * finds it taken starts again on another.
 */
export async function startRedisServer(port?: number, extraArgs: readonly string[] = []): Promise<RedisServerProcess> {
  for (let attempt = 1; ; attempt += 1) {
    const chosen = port ?? await freePort();
    try {
      return await startRedisServerOn(chosen, extraArgs);
    } catch (error) {
      if (port !== undefined || attempt === 5 || !(error instanceof PortTaken)) throw error;
    }
  }
}

class PortTaken extends Error {}

async function startRedisServerOn(port: number, extraArgs: readonly string[]): Promise<RedisServerProcess> {
  // A directory of its own: a replica writes the data it is sent to dump.rdb there, and a server
  // started in the test's directory would load one left by another.
  const dir = mkdtempSync(join(tmpdir(), 'pcat-redis-'));
  return startRedisProcess(port, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs], 'Ready to accept connections');
}

/**
 * A sentinel on `port` (one nothing listens on, when not given), watching the primary at
 * `primaryPort` as `name`, with a quorum of 2: it takes the primary as down after 3 s without an
 * answer (1 s failed over a primary that was only slow on a loaded machine). With passwords, it logs
 * in to the data servers with `data` and asks its own clients (other sentinels too) for `own`. Its
 * configuration file is its own, since a sentinel rewrites it.
 */
export async function startSentinel(primaryPort: number, name: string, passwords: { data?: string | undefined; own?: string | undefined } = {}): Promise<RedisServerProcess> {
  for (let attempt = 1; ; attempt += 1) {
    const chosen = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'pcat-sentinel-'));
    const file = join(dir, 'sentinel.conf');
    writeFileSync(file, [
      `port ${chosen}`, 'bind 127.0.0.1', `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 2`,
      `sentinel down-after-milliseconds ${name} 3000`,
      `sentinel failover-timeout ${name} 5000`,
      ...(passwords.data === undefined ? [] : [`sentinel auth-pass ${name} ${passwords.data}`]),
      ...(passwords.own === undefined ? [] : [`requirepass ${passwords.own}`, `sentinel sentinel-pass ${passwords.own}`]),
      '',
    ].join('\n'));
    try {
      return await startRedisProcess(chosen, [file, '--sentinel'], '+monitor master');
    } catch (error) {
      if (attempt === 5 || !(error instanceof PortTaken)) throw error;
    }
  }
}

async function startRedisProcess(port: number, args: readonly string[], readyLine: string): Promise<RedisServerProcess> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  await untilReady(child, readyLine);
  const exited = once(child, 'exit');
  return {
    url: `redis://127.0.0.1:${port}`,
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
  };
}

function untilReady(child: ChildProcess, readyLine: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onOutput = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes(readyLine)) settle();
    };
    const onError = (error: Error): void => settle(error);
    const onExit = (code: number | null): void => {
      const message = `redis-server exited ${code}: ${output}`;
      settle(/Address already in use/.test(output) ? new PortTaken(message) : new Error(message));
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      settle(new Error(`redis-server did not start within 5 s: ${output}`));
    }, 5_000);
    function settle(error?: Error): void {
      clearTimeout(timer);
      child.stdout?.off('data', onOutput);
      child.stderr?.off('data', onOutput);
      child.off('error', onError);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    }
    child.stdout?.on('data', onOutput);
    child.stderr?.on('data', onOutput);
    child.once('error', onError);
    child.once('exit', onExit);
  });
}
