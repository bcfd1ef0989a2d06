import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { ChangesElsewhere } from '../../application/instances/changes-elsewhere.js';
import type { AnnouncedKeyChanges } from '../../application/instances/change-versions.js';
import { systemClock, type Clock } from '../../application/common/clock.js';
import type { RateLimiter } from '../../application/access/rate-limiter.js';
import { TIMEOUTS } from '../timeouts.js';
import { countOnShare, RATE_LIMIT_WINDOW_MS, rateLimitStatus, type RateLimitStatus, type SharedCount, type ShareWindow } from '../../domain/rate-limit.js';
import { ScriptConnection, SlowReplyError } from './script-connection.js';
import { quitOrDrop, redisUnreachable } from './redis-client.js';
import {
  catalogVersionKey, CURRENT_TOKEN_LUA, CURRENT_TOKEN_SCRIPT, DEFAULT_VERSION_PREFIX, KEY_CHANGES_MARK_SCRIPT, KEY_CHANGES_SINCE_SCRIPT, keyChangesFrom, keyChangesKey, keysVersionKey, tokenFrom,
} from './version-keys.js';

/**
 * Counts one request and returns `{count, msLeft, instances}` in one atomic step, so concurrent
 * instances never read-then-write. The window starts with the key's first request;
 * the key's expiry ends it. A key found without an expiry (written by hand, say)
 * gets one, so it can never block a key for good.
 *
 * When ARGV[2] names the calling instance (at most once a second), the sorted set KEYS[2] records
 * it as seen now, by Redis's clock, forgets instances not seen for ARGV[3] ms, and `instances` is how
 * many are left; otherwise it is -1. What each instance may admit while Redis is away is its share.
 */
const COUNT_LUA = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local msLeft = redis.call('PTTL', KEYS[1])
if msLeft < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  msLeft = tonumber(ARGV[1])
end
local instances = -1
if ARGV[2] ~= '' then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  redis.call('ZADD', KEYS[2], now, ARGV[2])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[3]))
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  instances = redis.call('ZCARD', KEYS[2])
end
`;
const COUNT_SCRIPT = `${COUNT_LUA}\nreturn {count, msLeft, instances}`;
/**
 * The same count, and in the same round trip the key-set token (KEYS[3]) and the partner's catalog
 * token (KEYS[4]), each started where there is none from the fresh candidate ARGV[4], suffixed so the
 * two never start equal.
 */
const COUNT_AND_VERSIONS_SCRIPT = `${CURRENT_TOKEN_LUA}${COUNT_LUA}
return {count, msLeft, instances, current(KEYS[3], ARGV[4] .. 'k'), current(KEYS[4], ARGV[4] .. 'c')}`;

/** How often an instance tells Redis it is still there, in the count of a request. */
const INSTANCE_REFRESH_MS = 1_000;

const DEFAULT_KEY_PREFIX = 'pcat:rl:';
const DEFAULT_INSTANCES_KEY = 'pcat:instances';
const DEFAULT_COOL_DOWN_MS = TIMEOUTS.redisCoolDownMs;
/** Bounds what a slow or vanished Redis can add to a request. */
const TIMEOUT_MS = TIMEOUTS.redisCommandMs;
const LOST_AFTER_MS = TIMEOUTS.redisLostAfterMs;
const MAX_RECONNECT_DELAY_MS = TIMEOUTS.redisMaxReconnectDelayMs;

/** ioredis adds the script as a method at run time (EVALSHA, EVAL once after a Redis restart). */
interface CountingClient extends Redis {
  pcatKeysVersion(keysVersionKey: string, fresh: string): Promise<unknown>;
  pcatKeyChangesMark(keyChangesKey: string): Promise<unknown>;
  pcatKeyChangesSince(keyChangesKey: string, mark: number): Promise<unknown>;
}

export interface RedisRateLimiterOptions {
  /** `redis://host:port`; never logged, since it may carry a password. */
  readonly url: string;
  readonly limit: number;
  readonly windowMs?: number;
  /** Most keys whose last answer from Redis (and count on this instance's share) are remembered; the least recently seen goes first. */
  readonly maxKeys?: number;
  readonly clock?: Clock;
  /** This instance among those sharing Redis; a fresh random id by default. */
  readonly instanceId?: string;
  readonly logger?: Logger;
  /** Prepended to every key id; the key id is an id, never a key or its hash. */
  readonly keyPrefix?: string;
  /** The sorted set of the instances seen recently; defaults to `pcat:instances`, or `<keyPrefix>~instances` with a key prefix given. */
  readonly instancesKey?: string;
  /** A call not answered within this long is counted on this instance's share; Redis is not taken as lost for it. */
  readonly timeoutMs?: number;
  /** Redis is taken as lost when its connection fails or answers nothing for this long (time this process was held up left out). */
  readonly lostAfterMs?: number;
  /** How long to count on this instance's share after Redis is lost before probing it again. */
  readonly coolDownMs?: number;
  /**
   * Told the version tokens read with every count, and when Redis is lost and regained; without
   * one, only requests are counted.
   */
  readonly watch?: ChangesElsewhere | undefined;
  /** Prepended to the version tokens' keys. */
  readonly versionPrefix?: string;
}

export function createRedisRateLimiter(options: RedisRateLimiterOptions): RedisRateLimiter {
  return new RedisRateLimiter(options);
}

/**
 * What this instance knows of a key: Redis's last answer for it (a window that ended at -Infinity
 * when Redis has not answered for it), and its count on its own share since. Changed in place: it is
 * written on every count.
 */
interface KeyState extends SharedCount {
  remaining: number;
  endsAt: number;
  local: ShareWindow | undefined;
}

/**
 * The fixed-window counter (docs/decisions.md, rate limit), shared by every instance through
 * Redis. A circuit breaker keeps a lost Redis off the request path: when Redis is lost (its
 * connection refused or closed, or nothing answered for `lostAfterMs`) it counts on this
 * instance's share for `coolDownMs`, then one background PING decides whether to go back. A count
 * that is only slow (`timeoutMs`) is counted on the share for that request alone.
 *
 * The share: each count also tells how many instances Redis has seen within a window, and this
 * instance remembers per key what Redis last said was left and when the window ends. On its own, it
 * admits its share of that until the window ends, then its share of a fresh window, so the
 * instances together admit about one limit, not one each.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly client: CountingClient;
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly logger: Logger | undefined;
  private readonly keyPrefix: string;
  private readonly coolDownMs: number;
  private readonly clock: Clock;
  private readonly keys: LRUCache<string, KeyState>;
  private readonly instanceId: string;
  private readonly instancesKey: string;
  /** How many instances Redis last said it has seen, this one included. */
  private instances = 1;
  private lastRefresh = -Infinity;
  private slow = 0;
  private readonly watch: ChangesElsewhere | undefined;
  private readonly keysVersionKey: string;
  private readonly versionPrefix: string;
  private readonly counting: ScriptConnection;
  private readonly window: string;
  /** Fresh tokens are this random prefix and a count: unique, and cheaper than a UUID a request. */
  private readonly tokenPrefix = `${randomUUID()}.`;
  private tokenCount = 0;
  /** Named in messages by host and port only. */
  private readonly url: string;
  private breaker: { state: 'closed' } | { state: 'open'; until: number } | { state: 'probing' } = { state: 'closed' };

  constructor(options: RedisRateLimiterOptions) {
    this.url = options.url;
    this.limit = options.limit;
    this.windowMs = options.windowMs ?? RATE_LIMIT_WINDOW_MS;
    this.clock = options.clock ?? systemClock;
    this.keys = new LRUCache({ max: options.maxKeys ?? 100_000 });
    this.instanceId = options.instanceId ?? randomUUID();
    this.logger = options.logger;
    this.keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.instancesKey = options.instancesKey ?? (options.keyPrefix === undefined ? DEFAULT_INSTANCES_KEY : `${options.keyPrefix}~instances`);
    this.coolDownMs = options.coolDownMs ?? DEFAULT_COOL_DOWN_MS;
    this.watch = options.watch;
    this.versionPrefix = options.versionPrefix ?? DEFAULT_VERSION_PREFIX;
    this.keysVersionKey = keysVersionKey(this.versionPrefix);
    this.window = String(this.windowMs);
    // The count runs on every request: on a lean connection of its own (script-connection.ts).
    this.counting = new ScriptConnection({
      url: options.url,
      script: this.watch === undefined ? COUNT_SCRIPT : COUNT_AND_VERSIONS_SCRIPT,
      timeoutMs: options.timeoutMs ?? TIMEOUT_MS,
      lostAfterMs: options.lostAfterMs ?? LOST_AFTER_MS,
    });
    const client = new Redis(options.url, {
      // Without a connection a command fails at once instead of waiting in a queue.
      enableOfflineQueue: false,
      connectTimeout: TIMEOUT_MS,
      commandTimeout: TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    });
    client.defineCommand('pcatKeysVersion', { numberOfKeys: 1, lua: CURRENT_TOKEN_SCRIPT });
    client.defineCommand('pcatKeyChangesMark', { numberOfKeys: 1, lua: KEY_CHANGES_MARK_SCRIPT });
    client.defineCommand('pcatKeyChangesSince', { numberOfKeys: 1, lua: KEY_CHANGES_SINCE_SCRIPT });
    // The breaker reports the outage once; ioredis would otherwise print every reconnect error.
    client.on('error', () => undefined);
    this.client = client as CountingClient;
  }

  async consume(keyId: string, partnerId?: string): Promise<RateLimitStatus> {
    if (!this.redisInUse()) return this.countOnShare(keyId);
    try {
      const watch = this.watch;
      const keys = [this.keyPrefix + keyId, this.instancesKey];
      const args = [this.window, this.instanceToRefresh(), this.window];
      if (watch === undefined) {
        const [count, msLeft, instances] = parseReply(await this.counting.run(keys, args));
        return this.counted(keyId, count, msLeft, instances);
      }
      const partner = partnerId ?? '';
      keys.push(this.keysVersionKey, catalogVersionKey(this.versionPrefix, partner));
      args.push(this.freshToken());
      const [count, msLeft, instances, keysToken, catalogToken] = parseVersionsReply(await this.counting.run(keys, args));
      // On this one connection replies come back in the order Redis ran the scripts, so a partner's
      // token the watch holds only moves forward. (The key-set token is also read on the ioredis
      // connection: a reply from there seen out of order only costs one more read of the key set.)
      watch.keysSeen(keysToken);
      if (partnerId !== undefined) watch.catalogSeen(partnerId, catalogToken);
      return this.counted(keyId, count, msLeft, instances);
    } catch (error) {
      if (error instanceof SlowReplyError) {
        this.slow += 1;
        // Redis may only be slow: this request alone is counted here, and what it would have read
        // is read from the database instead, so a change announced before it is not missed.
        this.watch?.versionsMissed(partnerId);
      } else {
        this.redisFailed(error);
      }
      return this.countOnShare(keyId);
    }
  }

  /** Redis's answer, remembered for the key in case Redis is lost before the next. */
  private counted(keyId: string, count: number, msLeft: number, instances: number): RateLimitStatus {
    if (instances > 0) this.instances = instances;
    const remaining = this.limit - count;
    const endsAt = this.clock.now() + msLeft;
    const state = this.keys.get(keyId);
    if (state === undefined) {
      this.keys.set(keyId, { remaining, endsAt, local: undefined });
    } else {
      state.remaining = remaining;
      state.endsAt = endsAt;
      state.local = undefined;
    }
    return rateLimitStatus(count, this.limit, msLeft);
  }

  /** Counts the request on this instance's share of what the key had left (domain/rate-limit.ts). */
  private countOnShare(keyId: string): RateLimitStatus {
    const state = this.keys.get(keyId);
    const { window, status } = countOnShare(state?.local, state, this.clock.now(), this.limit, this.windowMs, this.instances);
    if (state === undefined) this.keys.set(keyId, { remaining: 0, endsAt: -Infinity, local: window });
    else state.local = window;
    return status;
  }

  /** This instance's id when it is time to tell Redis it is still there, else ''. */
  private instanceToRefresh(): string {
    const now = performance.now();
    if (now - this.lastRefresh < INSTANCE_REFRESH_MS) return '';
    this.lastRefresh = now;
    return this.instanceId;
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
      // A read that was only slow is not a lost Redis: the caller reads the database this once.
      if (!(error instanceof Error && error.message === COMMAND_TIMED_OUT)) this.redisFailed(error);
      return null;
    }
  }

  /** A mark on Redis's clock, taken before the key set is read from the database; null when Redis cannot be asked now. */
  async keyChangesMark(): Promise<number | null> {
    if (!this.redisInUse()) return null;
    const reply = await this.client.pcatKeyChangesMark(keyChangesKey(this.versionPrefix)).catch(() => null);
    return typeof reply === 'number' ? reply : null;
  }

  /** The key changes announced since the mark; null when Redis cannot be asked now or cannot tell them all. */
  async keyChangesSince(mark: number): Promise<AnnouncedKeyChanges | null> {
    if (!this.redisInUse()) return null;
    return keyChangesFrom(await this.client.pcatKeyChangesSince(keyChangesKey(this.versionPrefix), mark).catch(() => null));
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
          reject(redisUnreachable(this.url, `within ${timeoutMs} ms: ${lastError}`));
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

  /** Requests whose count Redis did not answer in time, each counted on this instance's share, since start. */
  slowCounts(): number {
    return this.slow;
  }

  /** How many instances Redis last said share it, this one included (1 before it has said). */
  instancesSeen(): number {
    return this.instances;
  }

  /** True while requests are counted on this instance's share: Redis was lost and has not answered a probe since. */
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
        'rate limiter: Redis unavailable; limiting on this instance\'s share until it returns',
      );
    }
  }
}

/** How ioredis rejects a command not answered within `commandTimeout`. */
const COMMAND_TIMED_OUT = 'Command timed out';

function parseVersionsReply(reply: unknown): [count: number, msLeft: number, instances: number, keysToken: string, catalogToken: string] {
  if (Array.isArray(reply) && typeof reply[0] === 'number' && typeof reply[1] === 'number' && typeof reply[2] === 'number' && typeof reply[3] === 'string' && typeof reply[4] === 'string') {
    return [reply[0], reply[1], reply[2], reply[3], reply[4]];
  }
  throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
}

function parseReply(reply: unknown): [count: number, msLeft: number, instances: number] {
  if (Array.isArray(reply) && typeof reply[0] === 'number' && typeof reply[1] === 'number' && typeof reply[2] === 'number') return [reply[0], reply[1], reply[2]];
  throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
}
