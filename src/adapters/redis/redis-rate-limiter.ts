import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RateLimiter } from '../../application/ports/rate-limiter.js';
import { RATE_LIMIT_WINDOW_MS, rateLimitStatus, type RateLimitStatus } from '../../domain/rate-limit.js';

/**
 * Counts one request and returns `{count, msLeft}` in one atomic step, so concurrent
 * instances never read-then-write. The window starts with the key's first request;
 * the key's expiry ends it. A key found without an expiry (written by hand, say)
 * gets one, so it can never block a key for good.
 */
const COUNT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local msLeft = redis.call('PTTL', KEYS[1])
if msLeft < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  msLeft = tonumber(ARGV[1])
end
return {count, msLeft}
`;

const DEFAULT_KEY_PREFIX = 'pcat:rl:';
const DEFAULT_COOL_DOWN_MS = 1_000;
/** Bounds what a slow or vanished Redis can add to a request. */
const TIMEOUT_MS = 200;
const MAX_RECONNECT_DELAY_MS = 1_000;

/** ioredis adds the script as a method at run time (EVALSHA, EVAL once after a Redis restart). */
interface CountingClient extends Redis {
  pcatCountRequest(key: string, windowMs: number): Promise<unknown>;
}

export interface RedisRateLimiterOptions {
  /** `redis://host:port`; never logged, since it may carry a password. */
  readonly url: string;
  readonly limit: number;
  readonly windowMs?: number;
  /** Answers while Redis is unreachable: the in-process limiter. */
  readonly fallback: RateLimiter;
  readonly logger?: Logger;
  /** Prepended to every key id; the key id is an id, never a key or its hash. */
  readonly keyPrefix?: string;
  /** How long to stay on the fallback after Redis fails before probing it again. */
  readonly coolDownMs?: number;
}

export function createRedisRateLimiter(options: RedisRateLimiterOptions): RedisRateLimiter {
  return new RedisRateLimiter(options);
}

/**
 * The fixed-window counter of decisions.md section 3, shared by every instance through
 * Redis. A circuit breaker keeps a lost Redis off the request path: on a failure it
 * switches to the fallback for `coolDownMs`, then one background PING decides whether
 * to go back.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly client: CountingClient;
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly fallback: RateLimiter;
  private readonly logger: Logger | undefined;
  private readonly keyPrefix: string;
  private readonly coolDownMs: number;
  private breaker: { state: 'closed' } | { state: 'open'; until: number } | { state: 'probing' } = { state: 'closed' };

  constructor(options: RedisRateLimiterOptions) {
    this.limit = options.limit;
    this.windowMs = options.windowMs ?? RATE_LIMIT_WINDOW_MS;
    this.fallback = options.fallback;
    this.logger = options.logger;
    this.keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.coolDownMs = options.coolDownMs ?? DEFAULT_COOL_DOWN_MS;
    const client = new Redis(options.url, {
      // Without a connection a command fails at once instead of waiting in a queue.
      enableOfflineQueue: false,
      connectTimeout: TIMEOUT_MS,
      commandTimeout: TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    });
    client.defineCommand('pcatCountRequest', { numberOfKeys: 1, lua: COUNT_SCRIPT });
    // The breaker reports the outage once; ioredis would otherwise print every reconnect error.
    client.on('error', () => undefined);
    this.client = client as CountingClient;
  }

  async consume(keyId: string): Promise<RateLimitStatus> {
    if (!this.redisInUse()) return this.fallback.consume(keyId);
    try {
      const [count, msLeft] = parseReply(await this.client.pcatCountRequest(this.keyPrefix + keyId, this.windowMs));
      return rateLimitStatus(count, this.limit, msLeft);
    } catch (error) {
      this.redisFailed(error);
      return this.fallback.consume(keyId);
    }
  }

  /** Resolves once connected to Redis; rejects if that takes longer than `timeoutMs`. */
  async ready(timeoutMs = 5_000): Promise<void> {
    if (this.client.status === 'ready') return;
    let lastError = 'no answer';
    const onError = (error: Error): void => {
      lastError = error.message;
    };
    this.client.on('error', onError);
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.client.off('ready', onReady);
          reject(new Error(`Redis not reachable within ${timeoutMs} ms: ${lastError}`));
        }, timeoutMs);
        const onReady = (): void => {
          clearTimeout(timer);
          resolve();
        };
        this.client.once('ready', onReady);
      });
    } finally {
      this.client.off('error', onError);
    }
  }

  async close(): Promise<void> {
    if (this.client.status === 'ready') {
      try {
        await this.client.quit();
        return;
      } catch {
        // Redis went away while closing: dropping the connection is all that is left.
      }
    }
    this.client.disconnect();
  }

  private redisInUse(): boolean {
    if (this.breaker.state === 'closed') return true;
    if (this.breaker.state === 'open' && performance.now() >= this.breaker.until) this.probe();
    return false;
  }

  /** Asks Redis off the request path, so a hung server never delays a request. */
  private probe(): void {
    this.breaker = { state: 'probing' };
    this.client.ping().then(
      () => {
        this.breaker = { state: 'closed' };
        this.logger?.info('rate limiter: Redis is back; counting in Redis again');
      },
      () => {
        this.breaker = { state: 'open', until: performance.now() + this.coolDownMs };
      },
    );
  }

  private redisFailed(error: unknown): void {
    const wasClosed = this.breaker.state === 'closed';
    if (this.breaker.state !== 'probing') this.breaker = { state: 'open', until: performance.now() + this.coolDownMs };
    if (wasClosed) {
      this.logger?.warn(
        { reason: error instanceof Error ? error.message : String(error) },
        'rate limiter: Redis unavailable; limiting in this process until it returns',
      );
    }
  }
}

function parseReply(reply: unknown): [count: number, msLeft: number] {
  if (Array.isArray(reply) && typeof reply[0] === 'number' && typeof reply[1] === 'number') return [reply[0], reply[1]];
  throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
}
