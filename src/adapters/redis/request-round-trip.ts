import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AnnouncedKeyChanges } from '../../application/instances/change-versions.js';
import type { ChangesElsewhere } from '../../application/instances/changes-elsewhere.js';
import { reasonOf } from '../../domain/failure-reason.js';
import { RATE_LIMIT_WINDOW_MS } from '../../domain/rate-limit.js';
import { TIMEOUTS } from '../timeouts.js';
import { isRedisRefusal, quitOrDrop, redisFailure, redisUnreachable } from './redis-client.js';
import { ioredisClient, loginOf, type RedisTarget } from './redis-target.js';
import { countCallsFor, SlowReplyError, type CountCalls } from './topology-calls.js';
import {
  catalogVersionKey, CURRENT_TOKEN_SCRIPT, DEFAULT_VERSION_PREFIX, KEY_CHANGES_MARK_SCRIPT, KEY_CHANGES_SINCE_SCRIPT, keyChangesFrom, keyChangesKey, keysVersionKey, tokenFrom,
} from './version-keys.js';

/**
 * Most requests counted in one script call: a turn with more sends more calls, so a flood never
 * makes one call (and Redis's time in it) without bound.
 */
const MOST_COUNTS_PER_CALL = 128;

/**
 * Counts that go to Redis at once, before their turn ends, when the process has nothing else to do
 * meanwhile: no call waits for its reply, and none was answered this turn. At 50 connections a turn
 * read some 40 requests, and with all their counts in one call at its end the process sat idle
 * until Redis answered (busy 92 to 94 % of the time); sent by 32, Redis counts them while the rest
 * are read. Where a call waits or a reply came, its answers are the turn's work, and a call sent
 * early only costs: at 400 connections, counts sent in the middle of a turn took up to 16 % more
 * CPU an answer (docs/performance.md).
 */
const EARLY_CALL_COUNTS = 32;

/** How often an instance tells Redis it is still there, in the count of a request. */
const INSTANCE_REFRESH_MS = 1_000;

export const DEFAULT_INSTANCES_KEY = 'pcat:instances';
/** Bounds what a slow or vanished Redis can add to a request. */
const TIMEOUT_MS = TIMEOUTS.redisCommandMs;
const LOST_AFTER_MS = TIMEOUTS.redisLostAfterMs;
const MAX_RECONNECT_DELAY_MS = TIMEOUTS.redisMaxReconnectDelayMs;

/** How ioredis rejects a command not answered within `commandTimeout`. */
const COMMAND_TIMED_OUT = 'Command timed out';

/**
 * What a request's count is handed to, in the round trip's own step: Redis's answer (the count in
 * the window, the milliseconds left of it, and how many instances Redis has seen, -1 when this
 * count did not ask), or word that there is none. Handing it on, rather than returning it, keeps
 * the request's await the only one.
 */
export interface CountTaker<T> {
  counted(keyId: string, count: number, msLeft: number, instances: number): T;
  /**
   * `carried`: what the count was to add to Redis's counter (1, and the requests it brought) and
   * Redis did not get; 0 for a reply that was only late, since Redis most likely ran the count.
   */
  notCounted(keyId: string, carried: number): T;
}

/** A request's count, waiting for the loop turn's end to go to Redis with the others of the turn. */
interface GatheredCount {
  readonly counterKey: string;
  readonly keyId: string;
  readonly partnerId: string | undefined;
  readonly taker: CountTaker<unknown>;
  /** What Redis adds to the counter: 1, and the requests admitted on this instance's share it brings. */
  readonly increment: number;
  readonly resolve: (value: unknown) => void;
}

/** ioredis adds the scripts as methods at run time (EVALSHA, EVAL once after a Redis restart). */
type VersionsClient = (Redis | Cluster) & {
  pcatKeysVersion(keysVersionKey: string, fresh: string): Promise<unknown>;
  pcatKeyChangesMark(keyChangesKey: string): Promise<unknown>;
  pcatKeyChangesSince(keyChangesKey: string, mark: number): Promise<unknown>;
};

export interface RequestRoundTripOptions {
  /** Where Redis is; never logged, since it may carry a password. */
  readonly target: RedisTarget;
  /** The counters' window; the instances not seen for as long are forgotten. */
  readonly windowMs?: number;
  /** This instance among those sharing Redis; a fresh random id by default. */
  readonly instanceId?: string;
  /** The sorted set of the instances seen recently; `pcat:instances` by default. */
  readonly instancesKey?: string;
  /** A call not answered within this long is given up for that request alone; Redis is not taken as lost for it. */
  readonly timeoutMs?: number;
  /** Redis is taken as lost when its connection fails or answers nothing for this long (time this process was held up left out). */
  readonly lostAfterMs?: number;
  /** How long to leave Redis alone after it is lost before probing it again. */
  readonly coolDownMs?: number;
  readonly logger?: Logger;
  /**
   * Told the version tokens read in every round trip, and when Redis is lost and regained;
   * without one, a round trip only counts.
   */
  readonly watch?: ChangesElsewhere | undefined;
  /** Prepended to the version tokens' keys. */
  readonly versionPrefix?: string;
}

/**
 * The one call to Redis the requests make (docs/several-instances.md), shared by the requests of a
 * loop turn: the rate limiter's counts and, in the same script, the version tokens through which
 * this instance learns what changed elsewhere. Both concerns use it; neither feeds the other: the
 * counts are handed to the limiter and the tokens to the watch, both here. The key set reads the key-set token and the key changes
 * announced through `keysVersion`, `keyChangesMark` and `keyChangesSince`, off the request path and
 * behind the same breaker.
 *
 * A circuit breaker keeps a lost Redis off the request path: when Redis is lost (its connection
 * refused or closed, or nothing answered for `lostAfterMs`) no call is made for `coolDownMs`, then
 * one background probe (a count of nothing, and a PING) decides whether to go back; the watch is
 * told of both. A call that is only
 * slow (`timeoutMs`) is given up for that request alone, and the watch told what it missed.
 */
export class RedisRequestRoundTrip {
  readonly windowMs: number;
  private readonly client: VersionsClient;
  private readonly counting: CountCalls;
  private readonly window: string;
  private readonly logger: Logger | undefined;
  private readonly coolDownMs: number;
  private readonly instanceId: string;
  private readonly instancesKey: string;
  private readonly watch: ChangesElsewhere | undefined;
  private readonly versionPrefix: string;
  private readonly keysVersionKey: string;
  private lastRefresh = -Infinity;
  private slow = 0;
  /** Fresh tokens are this random prefix and a count: unique, and cheaper than a UUID a request. */
  private readonly tokenPrefix = `${randomUUID()}.`;
  private tokenCount = 0;
  /** Calls sent and not yet answered or given up. */
  private callsWaiting = 0;
  /** A reply was handed out this loop turn: its requests' answers are this turn's work. */
  private answeredThisTurn = false;
  /** Counts made this loop turn, not yet sent. */
  private gathered: GatheredCount[] = [];
  private breaker: { state: 'closed' } | { state: 'open'; until: number } | { state: 'probing' } = { state: 'closed' };
  /** Named in messages by hosts and ports only. */
  private readonly target: RedisTarget;
  /** The caller of `ready` was told Redis is away: the first request that finds it so says nothing more. */
  private lossTold = false;
  /** The replication id of the Redis whose data the tokens seen came from (with a watch); unknown after a loss. */
  private server: string | undefined;

  constructor(options: RequestRoundTripOptions) {
    this.target = options.target;
    this.windowMs = options.windowMs ?? RATE_LIMIT_WINDOW_MS;
    this.window = String(this.windowMs);
    this.logger = options.logger;
    this.coolDownMs = options.coolDownMs ?? TIMEOUTS.redisCoolDownMs;
    this.instanceId = options.instanceId ?? randomUUID();
    this.instancesKey = options.instancesKey ?? DEFAULT_INSTANCES_KEY;
    this.watch = options.watch;
    this.versionPrefix = options.versionPrefix ?? DEFAULT_VERSION_PREFIX;
    this.keysVersionKey = keysVersionKey(this.versionPrefix);
    // The count runs on every request: on connections of its own (topology-calls.ts).
    this.counting = countCallsFor(options.target, {
      withVersions: this.watch !== undefined,
      timeoutMs: options.timeoutMs ?? TIMEOUT_MS,
      lostAfterMs: options.lostAfterMs ?? LOST_AFTER_MS,
      maxReconnectDelayMs: MAX_RECONNECT_DELAY_MS,
    });
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
    // Connected after all: a later loss is a new one, to be told.
    client.on('ready', () => {
      this.lossTold = false;
    });
    this.client = client as VersionsClient;
  }

  /**
   * One request's round trip: counts the key on `counterKey` and hands Redis's answer to the taker
   * (`notCounted` when there is none: Redis lost, so nothing is sent, or slow this once); with a
   * watch, tells the watch the key-set token and the partner's catalog token read with it.
   *
   * The counts of one loop turn go together, in one script call, at the turn's end (setImmediate,
   * right after the poll phase that read the turn's requests): a lone request waits for nothing but
   * the rest of its turn. Redis runs one script, not one a request, and the tokens are read once for
   * all of them. A turn that gathers EARLY_CALL_COUNTS with nothing else to do sends those at once.
   * (Sending a turn's very first count at once while no call waited made two calls a turn under
   * load: each write and read on the connection cost more CPU than the overlap with Redis gained;
   * docs/performance.md.)
   */
  count<T>(counterKey: string, keyId: string, partnerId: string | undefined, taker: CountTaker<T>, increment = 1): Promise<T> {
    if (!this.inUse()) return Promise.resolve(taker.notCounted(keyId, increment));
    return new Promise<T>((resolve) => {
      const gathered = this.gathered.push({ counterKey, keyId, partnerId, taker, increment, resolve: resolve as (value: unknown) => void });
      if (gathered === 1) setImmediate(this.sendGathered);
      else if (gathered === EARLY_CALL_COUNTS && this.callsWaiting === 0 && !this.answeredThisTurn) this.sendGathered();
    });
  }

  /** The counts gathered so far, sent in calls of at most MOST_COUNTS_PER_CALL; none when an early call took them all. */
  private readonly sendGathered = (): void => {
    const gathered = this.gathered;
    this.gathered = [];
    for (let from = 0; from < gathered.length; from += MOST_COUNTS_PER_CALL) {
      const counts = gathered.length <= MOST_COUNTS_PER_CALL ? gathered : gathered.slice(from, from + MOST_COUNTS_PER_CALL);
      // Redis taken as lost since they were made: counted on this instance's share, as they would have been.
      if (!this.inUse()) this.notCounted(counts);
      else this.sendCounts(counts);
    }
  };

  /** The end of a turn in which a reply was handed out. */
  private readonly turnEnded = (): void => {
    this.answeredThisTurn = false;
  };

  private sendCounts(counts: readonly GatheredCount[]): void {
    const watch = this.watch;
    const keys = watch === undefined ? [this.instancesKey] : [this.instancesKey, this.keysVersionKey];
    const first = keys.length + 1;
    // The partners among the counts, each once: its catalog token is read once for all of them.
    const partners: string[] = [];
    for (const count of counts) {
      keys.push(count.counterKey);
      if (watch !== undefined && count.partnerId !== undefined && !partners.includes(count.partnerId)) partners.push(count.partnerId);
    }
    for (const partner of partners) keys.push(catalogVersionKey(this.versionPrefix, partner));
    const args = [this.window, this.instanceToRefresh(), this.window, String(first), String(counts.length), watch === undefined ? '' : this.freshToken()];
    for (const count of counts) args.push(count.increment === 1 ? '1' : String(count.increment));
    this.callsWaiting += 1;
    this.counting.run(keys, args).then(
      (reply) => {
        this.callsWaiting -= 1;
        if (!this.answeredThisTurn) {
          this.answeredThisTurn = true;
          setImmediate(this.turnEnded);
        }
        this.deliver(counts, partners, reply);
      },
      (error: unknown) => {
        this.callsWaiting -= 1;
        if (error instanceof SlowReplyError) {
          this.slow += counts.length;
          // Redis may only be slow: what these requests would have read is read from the database
          // instead, so a change announced before them is not missed.
          if (partners.length === 0) watch?.versionsMissed(undefined);
          for (const partner of partners) watch?.versionsMissed(partner);
        } else {
          this.lost(error);
        }
        this.notCounted(counts, error instanceof SlowReplyError);
      },
    );
  }

  /** Redis's reply for the counts: each one's count handed to its taker, and the tokens to the watch. */
  private deliver(counts: readonly GatheredCount[], partners: readonly string[], reply: unknown): void {
    const watch = this.watch;
    const countsAt = watch === undefined ? 1 : 2;
    const tokensAt = countsAt + 2 * counts.length;
    if (!isCountReply(reply, countsAt, tokensAt, partners.length + (watch === undefined ? 0 : 1))) {
      this.lost(new Error(`unexpected reply from the count script: ${JSON.stringify(reply)}`));
      this.notCounted(counts);
      return;
    }
    if (watch !== undefined) {
      this.sawServer(reply[reply.length - 1] as string, watch);
      // The tokens are read on one connection (to one node, on a Cluster), whose replies come back in
      // the order Redis ran the scripts, so a partner's token the watch holds only moves forward.
      // (The key-set token is also read on the other client: a reply from there seen out of order
      // only costs one more read of the key set.)
      watch.keysSeen(reply[1] as string);
      for (let i = 0; i < partners.length; i += 1) watch.catalogSeen(partners[i]!, reply[tokensAt + i] as string);
    }
    const instances = reply[0] as number;
    for (let i = 0; i < counts.length; i += 1) {
      const count = counts[i]!;
      count.resolve(count.taker.counted(count.keyId, reply[countsAt + 2 * i] as number, reply[countsAt + 2 * i + 1] as number, instances));
    }
  }

  /**
   * A reply from another Redis than the last (a failover's new primary, or one restarted without its
   * data) may lack the last announcements: taken as a loss and a return, before any of its counts is
   * handed out, so every answer and key held is read again before the next request is answered.
   */
  private sawServer(server: string, watch: ChangesElsewhere): void {
    if (this.server !== undefined && this.server !== server) {
      this.logger?.warn('rate limiter: Redis switched (a new primary, or one restarted without its data); re-reading keys and answers held, as after a loss');
      watch.sharingLost();
      watch.sharingRegained();
    }
    this.server = server;
  }

  private notCounted(counts: readonly GatheredCount[], late = false): void {
    for (const count of counts) count.resolve(count.taker.notCounted(count.keyId, late ? 0 : count.increment));
  }

  /** The key-set token, reported to the watch; null when Redis cannot be asked now. */
  async keysVersion(): Promise<string | null> {
    if (!this.inUse()) return null;
    try {
      const token = tokenFrom(await this.client.pcatKeysVersion(this.keysVersionKey, this.freshToken()));
      this.watch?.keysSeen(token);
      return token;
    } catch (error) {
      // A read that was only slow is not a lost Redis: the caller reads the database this once.
      if (!(error instanceof Error && error.message === COMMAND_TIMED_OUT)) this.lost(error);
      return null;
    }
  }

  /** A mark on Redis's clock, taken before the key set is read from the database; null when Redis cannot be asked now. */
  async keyChangesMark(): Promise<number | null> {
    if (!this.inUse()) return null;
    const reply = await this.client.pcatKeyChangesMark(keyChangesKey(this.versionPrefix)).catch(() => null);
    return typeof reply === 'number' ? reply : null;
  }

  /** The key changes announced since the mark; null when Redis cannot be asked now or cannot tell them all. */
  async keyChangesSince(mark: number): Promise<AnnouncedKeyChanges | null> {
    if (!this.inUse()) return null;
    return keyChangesFrom(await this.client.pcatKeyChangesSince(keyChangesKey(this.versionPrefix), mark).catch(() => null));
  }

  /**
   * Resolves once connected to Redis; rejects if that takes longer than `timeoutMs`, and at once with
   * a RedisRefusedError when Redis refuses the user the settings name, which no wait mends.
   */
  async ready(timeoutMs = 5_000): Promise<void> {
    await this.clientReady(timeoutMs);
    await this.passwordAskedFor();
    await this.countingConnected(timeoutMs);
    await this.countingLoggedIn();
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

  /**
   * Waits, at most `timeoutMs`, until the counting calls can be sent: on Sentinel and Cluster their
   * client learns the primary or the slots first, and a count sent before would fail as a loss.
   */
  private async countingConnected(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.counting.whenConnected(), new Promise((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    })]);
    clearTimeout(timer);
  }

  private clientReady(timeoutMs: number): Promise<void> {
    if (this.client.status === 'ready') return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      let lastError = 'no answer';
      const timer = setTimeout(() => {
        this.lossTold = true;
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

  /**
   * Runs the count script on the counting connection once, counting nothing: rejects when Redis
   * refuses its login or the script. Any other failure is the breaker's, as for a request's count.
   */
  private async countingLoggedIn(): Promise<void> {
    try {
      await this.counting.run(...this.emptyCount());
    } catch (error) {
      if (isRedisRefusal(reasonOf(error))) throw redisFailure(this.target, reasonOf(error));
    }
  }

  close(): Promise<void> {
    this.counting.close();
    return quitOrDrop(this.client);
  }

  /** Requests whose count was given up as slow since start, each counted on this instance's share. */
  slowCounts(): number {
    return this.slow;
  }

  /** True while Redis is taken as lost: it was lost and has not answered a probe since. */
  usingFallback(): boolean {
    return this.breaker.state !== 'closed';
  }

  private inUse(): boolean {
    if (this.breaker.state === 'closed') return true;
    if (this.breaker.state === 'open' && performance.now() >= this.breaker.until) this.probe();
    return false;
  }

  /**
   * Asks Redis off the request path, so a hung server never delays a request: Redis is back when it
   * counts (the count script, counting nothing) and answers a PING on the other connection. A Redis
   * that answers but will not count (READONLY: a replica now) stays lost, and is asked again after
   * the next cool-down, without a word more than the loss's.
   */
  private probe(): void {
    this.breaker = { state: 'probing' };
    Promise.all([this.client.ping(), this.counting.run(...this.emptyCount())]).then(
      () => {
        this.breaker = { state: 'closed' };
        this.lossTold = false;
        this.server = undefined;
        this.watch?.sharingRegained();
        this.logger?.info(this.watch === undefined
          ? 'rate limiter: Redis is back; counting in Redis again'
          : 'rate limiter: Redis is back; counting in Redis again, and re-reading keys and answers held');
      },
      () => {
        this.breaker = { state: 'open', until: performance.now() + this.coolDownMs };
        // A connection that looks open but carries nothing (a partition drops packets without a
        // reset) never recovers by itself: start a new one, which ioredis retries until it connects.
        // One made during the partition may be stuck after its TCP handshake, waiting for an answer
        // to its ready check that will never come: ioredis times out neither.
        if (isHungOrOpen(this.client.status)) this.client.disconnect(true);
        this.counting.renewIfHung();
      },
    );
  }

  private lost(error: unknown): void {
    const wasClosed = this.breaker.state === 'closed';
    if (this.breaker.state !== 'probing') this.breaker = { state: 'open', until: performance.now() + this.coolDownMs };
    this.watch?.sharingLost();
    const told = this.lossTold;
    this.lossTold = false;
    if (wasClosed && !told) {
      const reason = reasonOf(error);
      const fix = refusalFix(reason);
      this.logger?.warn({ reason, ...(fix === undefined ? {} : { fix }) }, 'rate limiter: Redis unavailable; limiting on this instance\'s share until it returns');
    }
  }

  /**
   * The count script's keys and arguments with no count in them, telling Redis this instance is
   * there: a write, so a Redis that will not write (READONLY) refuses it as it would a count.
   */
  private emptyCount(): [string[], string[]] {
    const keys = this.watch === undefined ? [this.instancesKey] : [this.instancesKey, this.keysVersionKey];
    const args = [this.window, this.instanceId, this.window, String(keys.length + 1), '0', this.watch === undefined ? '' : this.freshToken()];
    return [keys, args];
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
}

/**
 * Whether a reply is what the count script returns: the instances and every count and ms left as
 * integers, and the tokens (the key-set token at 1 when the counts start at 2, then one a partner
 * after the counts, then the replication id) as `strings` non-empty strings.
 */
function isCountReply(reply: unknown, countsAt: number, tokensAt: number, strings: number): reply is unknown[] {
  if (!Array.isArray(reply) || reply.length !== tokensAt + strings || typeof reply[0] !== 'number') return false;
  if (countsAt === 2 && !isToken(reply[1])) return false;
  for (let i = countsAt; i < tokensAt; i += 1) if (typeof reply[i] !== 'number') return false;
  for (let i = tokensAt; i < reply.length; i += 1) if (!isToken(reply[i])) return false;
  return true;
}

function isToken(item: unknown): item is string {
  return typeof item === 'string' && item !== '';
}

/**
 * What to do about a Redis that answers and will not count, by its reply: it stays so until someone
 * acts, where a lost Redis comes back by itself.
 */
function refusalFix(reason: string): string | undefined {
  if (/^(MOVED|ASK|CROSSSLOT|CLUSTERDOWN)\b/.test(reason)) return 'Redis is a Cluster: name its nodes in REDIS_CLUSTER_NODES instead of one in REDIS_URL';
  if (/^READONLY\b/.test(reason)) return 'Redis is a replica: point REDIS_URL at the primary, or name the sentinels in REDIS_SENTINELS so the primary is followed';
  return undefined;
}

/** ioredis's status of a connection that is open, or has connected and waits for its ready check. */
function isHungOrOpen(status: string): boolean {
  return status === 'ready' || status === 'connect';
}
