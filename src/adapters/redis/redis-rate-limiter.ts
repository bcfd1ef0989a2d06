import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ChangeWatch } from '../../application/change-watch.js';
import type { RateLimiter } from '../../application/ports/rate-limiter.js';
import { TIMEOUTS } from '../../application/timeouts.js';
import { RATE_LIMIT_WINDOW_MS, rateLimitStatus, type RateLimitStatus } from '../../domain/rate-limit.js';
import { ScriptConnection } from './script-connection.js';
import { quitOrDrop } from './redis-client.js';
import { catalogVersionKey, CURRENT_TOKEN_LUA, CURRENT_TOKEN_SCRIPT, DEFAULT_VERSION_PREFIX, keysVersionKey, tokenFrom } from './version-keys.js';

/**
 * Counts one request and returns `{count, msLeft}` in one atomic step, so concurrent
 * instances never read-then-write. The window starts with the key's first request;
 * the key's expiry ends it. A key found without an expiry (written by hand, say)
 * gets one, so it can never block a key for good.
 */
const COUNT_LUA = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local msLeft = redis.call('PTTL', KEYS[1])
if msLeft < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  msLeft = tonumber(ARGV[1])
end
`;
const COUNT_SCRIPT = `${COUNT_LUA}\nreturn {count, msLeft}`;
/**
 * The same count, and in the same round trip the key-set token (KEYS[2]) and the partner's catalog
 * token (KEYS[3]), each started where there is none from the fresh candidate ARGV[2], suffixed so the
 * two never start equal.
 */
const COUNT_AND_VERSIONS_SCRIPT = `${CURRENT_TOKEN_LUA}${COUNT_LUA}
return {count, msLeft, current(KEYS[2], ARGV[2] .. 'k'), current(KEYS[3], ARGV[2] .. 'c')}`;

const DEFAULT_KEY_PREFIX = 'pcat:rl:';
const DEFAULT_COOL_DOWN_MS = TIMEOUTS.redisCoolDownMs;
/** Bounds what a slow or vanished Redis can add to a request. */
const TIMEOUT_MS = TIMEOUTS.redisCommandMs;
const MAX_RECONNECT_DELAY_MS = TIMEOUTS.redisMaxReconnectDelayMs;

/** ioredis adds the script as a method at run time (EVALSHA, EVAL once after a Redis restart). */
interface CountingClient extends Redis {
  pcatKeysVersion(keysVersionKey: string, fresh: string): Promise<unknown>;
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
  /**
   * Told the version tokens read with every count, and when Redis is lost and regained; without
   * one, only requests are counted.
   */
  readonly watch?: ChangeWatch | undefined;
  /** Prepended to the version tokens' keys. */
  readonly versionPrefix?: string;
}

export function createRedisRateLimiter(options: RedisRateLimiterOptions): RedisRateLimiter {
  return new RedisRateLimiter(options);
}

/**
 * The fixed-window counter (docs/decisions.md, rate limit), shared by every instance through
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
  private readonly watch: ChangeWatch | undefined;
  private readonly keysVersionKey: string;
  private readonly versionPrefix: string;
  private readonly counting: ScriptConnection;
  private readonly window: string;
  /** Fresh tokens are this random prefix and a count: unique, and cheaper than a UUID a request. */
  private readonly tokenPrefix = `${randomUUID()}.`;
  private tokenCount = 0;
  private breaker: { state: 'closed' } | { state: 'open'; until: number } | { state: 'probing' } = { state: 'closed' };

  constructor(options: RedisRateLimiterOptions) {
    this.limit = options.limit;
    this.windowMs = options.windowMs ?? RATE_LIMIT_WINDOW_MS;
    this.fallback = options.fallback;
    this.logger = options.logger;
    this.keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.coolDownMs = options.coolDownMs ?? DEFAULT_COOL_DOWN_MS;
    this.watch = options.watch;
    this.versionPrefix = options.versionPrefix ?? DEFAULT_VERSION_PREFIX;
    this.keysVersionKey = keysVersionKey(this.versionPrefix);
    this.window = String(this.windowMs);
    // The count runs on every request: on a lean connection of its own (script-connection.ts).
    this.counting = new ScriptConnection({ url: options.url, script: this.watch === undefined ? COUNT_SCRIPT : COUNT_AND_VERSIONS_SCRIPT, timeoutMs: TIMEOUT_MS });
    const client = new Redis(options.url, {
      // Without a connection a command fails at once instead of waiting in a queue.
      enableOfflineQueue: false,
      connectTimeout: TIMEOUT_MS,
      commandTimeout: TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    });
    client.defineCommand('pcatKeysVersion', { numberOfKeys: 1, lua: CURRENT_TOKEN_SCRIPT });
    // The breaker reports the outage once; ioredis would otherwise print every reconnect error.
    client.on('error', () => undefined);
    this.client = client as CountingClient;
  }

  async consume(keyId: string, partnerId?: string): Promise<RateLimitStatus> {
    if (!this.redisInUse()) return this.fallback.consume(keyId, partnerId);
    try {
      const watch = this.watch;
      if (watch === undefined) {
        const [count, msLeft] = parseReply(await this.counting.run([this.keyPrefix + keyId], [this.window]));
        return rateLimitStatus(count, this.limit, msLeft);
      }
      const partner = partnerId ?? '';
      const reply = await this.counting.run([this.keyPrefix + keyId, this.keysVersionKey, catalogVersionKey(this.versionPrefix, partner)], [this.window, this.freshToken()]);
      const [count, msLeft, keysToken, catalogToken] = parseVersionsReply(reply);
      // On this one connection replies come back in the order Redis ran the scripts, so a partner's
      // token the watch holds only moves forward. (The key-set token is also read on the ioredis
      // connection: a reply from there seen out of order only costs one more read of the key set.)
      watch.keysSeen(keysToken);
      if (partnerId !== undefined) watch.catalogSeen(partnerId, catalogToken);
      return rateLimitStatus(count, this.limit, msLeft);
    } catch (error) {
      this.redisFailed(error);
      return this.fallback.consume(keyId, partnerId);
    }
  }

  private freshToken(): string {
    this.tokenCount += 1;
    return this.tokenPrefix + String(this.tokenCount);
  }

  /** The key-set token, reported to the watch; null when Redis cannot be asked now. */
  async keysVersion(): Promise<string | null> {
    if (!this.redisInUse()) return null;
    try {
      const token = tokenFrom(await this.client.pcatKeysVersion(this.keysVersionKey, this.freshToken()));
      this.watch?.keysSeen(token);
      return token;
    } catch (error) {
      this.redisFailed(error);
      return null;
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

  close(): Promise<void> {
    this.counting.close();
    return quitOrDrop(this.client);
  }

  /** True while requests are counted by the fallback: Redis failed and has not answered a probe since. */
  usingFallback(): boolean {
    return this.breaker.state !== 'closed';
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
        this.watch?.sharingRegained();
        this.logger?.info(this.watch === undefined
          ? 'rate limiter: Redis is back; counting in Redis again'
          : 'rate limiter: Redis is back; counting in Redis again, and re-reading keys and answers held');
      },
      () => {
        this.breaker = { state: 'open', until: performance.now() + this.coolDownMs };
        // A connection that looks open but carries nothing (a partition drops packets without a
        // reset) never recovers by itself: start a new one, which ioredis retries until it connects.
        if (this.client.status === 'ready') this.client.disconnect(true);
      },
    );
  }

  private redisFailed(error: unknown): void {
    const wasClosed = this.breaker.state === 'closed';
    if (this.breaker.state !== 'probing') this.breaker = { state: 'open', until: performance.now() + this.coolDownMs };
    this.watch?.sharingLost();
    if (wasClosed) {
      this.logger?.warn(
        { reason: error instanceof Error ? error.message : String(error) },
        'rate limiter: Redis unavailable; limiting in this process until it returns',
      );
    }
  }
}

function parseVersionsReply(reply: unknown): [count: number, msLeft: number, keysToken: string, catalogToken: string] {
  if (Array.isArray(reply) && typeof reply[0] === 'number' && typeof reply[1] === 'number' && typeof reply[2] === 'string' && typeof reply[3] === 'string') {
    return [reply[0], reply[1], reply[2], reply[3]];
  }
  throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
}

function parseReply(reply: unknown): [count: number, msLeft: number] {
  if (Array.isArray(reply) && typeof reply[0] === 'number' && typeof reply[1] === 'number') return [reply[0], reply[1]];
  throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
}
