import type { Cluster, Redis } from 'ioredis';
import type { AnnouncedKeyChanges } from '../../application/instances/change-versions.js';
import type { ChangesElsewhere } from '../../application/instances/changes-elsewhere.js';
import { reasonOf } from '../../domain/failure-reason.js';
import { TIMEOUTS } from '../timeouts.js';
import type { RedisBreaker } from './redis-breaker.js';
import { isRedisRefusal, quitOrDrop, redisFailure, redisUnreachable } from './redis-client.js';
import { ioredisClient, loginOf, type RedisTarget } from './redis-target.js';
import {
  CURRENT_TOKEN_SCRIPT, KEY_CHANGES_MARK_SCRIPT, KEY_CHANGES_SINCE_SCRIPT, keyChangesFrom, keyChangesKey, keysVersionKey, tokenFrom, type FreshTokens,
} from './version-keys.js';

const TIMEOUT_MS = TIMEOUTS.redisCommandMs;
const MAX_RECONNECT_DELAY_MS = TIMEOUTS.redisMaxReconnectDelayMs;

/** How ioredis rejects a command not answered within `commandTimeout`. */
const COMMAND_TIMED_OUT = 'Command timed out';

/** ioredis adds the scripts as methods at run time (EVALSHA, EVAL once after a Redis restart). */
type VersionsClient = (Redis | Cluster) & {
  pcatKeysVersion(keysVersionKey: string, fresh: string): Promise<unknown>;
  pcatKeyChangesMark(keyChangesKey: string): Promise<unknown>;
  pcatKeyChangesSince(keyChangesKey: string, mark: number): Promise<unknown>;
};

export interface KeySetVersionReaderOptions {
  /** Where Redis is; never logged, since it may carry a password. */
  readonly target: RedisTarget;
  /** The round trip's breaker: these reads are not made while Redis is taken as lost, and a failed one may take it so. */
  readonly breaker: RedisBreaker;
  readonly watch: ChangesElsewhere | undefined;
  /** Prepended to the version tokens' keys. */
  readonly versionPrefix: string;
  /** Shared with the round trip's counts. */
  readonly tokens: FreshTokens;
}

/**
 * The key set's reads of its token and of the key changes announced, off the request path, on a
 * client of their own beside the round trip's counting connections. The breaker's probe and the
 * round trip's `ready` use this client too: it is the one that logs in with the settings' password.
 */
export class RedisKeySetVersionReader {
  private readonly client: VersionsClient;
  private readonly breaker: RedisBreaker;
  private readonly watch: ChangesElsewhere | undefined;
  private readonly versionPrefix: string;
  private readonly keysVersionKey: string;
  private readonly tokens: FreshTokens;
  /** Named in messages by hosts and ports only. */
  private readonly target: RedisTarget;

  constructor(options: KeySetVersionReaderOptions) {
    this.target = options.target;
    this.breaker = options.breaker;
    this.watch = options.watch;
    this.versionPrefix = options.versionPrefix;
    this.keysVersionKey = keysVersionKey(this.versionPrefix);
    this.tokens = options.tokens;
    const client = ioredisClient(options.target, {
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
    client.on('ready', () => {
      this.breaker.connected();
    });
    this.client = client as VersionsClient;
  }

  /** The key-set token, reported to the watch; null when Redis cannot be asked now. */
  async keysVersion(): Promise<string | null> {
    if (!this.breaker.inUse()) return null;
    try {
      const token = tokenFrom(await this.client.pcatKeysVersion(this.keysVersionKey, this.tokens.next()));
      this.watch?.keysSeen(token);
      return token;
    } catch (error) {
      // A read that was only slow is not a lost Redis: the caller reads the database this once.
      if (!(error instanceof Error && error.message === COMMAND_TIMED_OUT)) this.breaker.lost(error);
      return null;
    }
  }

  /** A mark on Redis's clock, taken before the key set is read from the database; null when Redis cannot be asked now. */
  async keyChangesMark(): Promise<number | null> {
    if (!this.breaker.inUse()) return null;
    const reply = await this.client.pcatKeyChangesMark(keyChangesKey(this.versionPrefix)).catch(() => null);
    return typeof reply === 'number' ? reply : null;
  }

  /** The key changes announced since the mark; null when Redis cannot be asked now or cannot tell them all. */
  async keyChangesSince(mark: number): Promise<AnnouncedKeyChanges | null> {
    if (!this.breaker.inUse()) return null;
    return keyChangesFrom(await this.client.pcatKeyChangesSince(keyChangesKey(this.versionPrefix), mark).catch(() => null));
  }

  /**
   * Resolves once connected to Redis; rejects if that takes longer than `timeoutMs`, and at once with
   * a RedisRefusedError when Redis refuses the user the settings name, which no wait mends.
   */
  async ready(timeoutMs: number): Promise<void> {
    await this.clientReady(timeoutMs);
    await this.passwordAskedFor();
  }

  /** Half of the breaker's probe: Redis is back when it also counts. */
  ping(): Promise<unknown> {
    return this.client.ping();
  }

  /**
   * A connection that looks open but carries nothing (a partition drops packets without a reset)
   * never recovers by itself: a new one is started, which ioredis retries until it connects. One
   * made during the partition may be stuck after its TCP handshake, waiting for an answer to its
   * ready check that will never come: ioredis times out neither.
   */
  renewIfHung(): void {
    if (isHungOrOpen(this.client.status)) this.client.disconnect(true);
  }

  close(): Promise<void> {
    return quitOrDrop(this.client);
  }

  /**
   * Logs in once more, in words: ioredis lets a password that Redis does not ask for pass with a
   * warning on stderr, and such a Redis is likely not the one meant. Its refusal stops the start.
   */
  private async passwordAskedFor(): Promise<void> {
    const login = loginOf(this.target);
    if (login === null) return;
    try {
      await (login.username === null ? this.client.call('AUTH', login.password) : this.client.call('AUTH', login.username, login.password));
    } catch (error) {
      if (isRedisRefusal(reasonOf(error))) throw redisFailure(this.target, reasonOf(error));
    }
  }

  private clientReady(timeoutMs: number): Promise<void> {
    if (this.client.status === 'ready') return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      let lastError = 'no answer';
      const timer = setTimeout(() => {
        this.breaker.lossToldAtStart();
        settle(redisUnreachable(this.target, `within ${timeoutMs} ms: ${lastError}`));
      }, timeoutMs);
      const settle = (error?: Error): void => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        this.client.off('error', onError);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onReady = (): void => settle();
      const onError = (error: Error): void => {
        lastError = error.message;
        if (isRedisRefusal(error.message)) settle(redisFailure(this.target, error.message));
      };
      this.client.once('ready', onReady);
      this.client.on('error', onError);
    });
  }
}

/** ioredis's status of a connection that is open, or has connected and waits for its ready check. */
function isHungOrOpen(status: string): boolean {
  return status === 'ready' || status === 'connect';
}
