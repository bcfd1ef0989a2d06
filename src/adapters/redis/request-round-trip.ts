import { randomUUID } from 'node:crypto';
import type { SpanContext } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { ChangesElsewhere } from '../../application/instances/changes-elsewhere.js';
import { reasonOf } from '../../domain/failure-reason.js';
import { RATE_LIMIT_WINDOW_MS } from '../../domain/rate-limit.js';
import { TIMEOUTS } from '../timeouts.js';
import { endSpan, linkableContext, startSharedSpan, tracing } from '../tracing/tracing.js';
import { DEFAULT_INSTANCES_KEY, InstancePresence } from './instance-presence.js';
import { RedisKeySetVersionReader } from './key-set-version-reader.js';
import { RedisBreaker } from './redis-breaker.js';
import { isRedisRefusal, redisFailure } from './redis-client.js';
import type { RedisTarget } from './redis-target.js';
import { countCallsFor, SlowReplyError, type CountCalls } from './topology-calls.js';
import { catalogVersionKey, DEFAULT_VERSION_PREFIX, FreshTokens, keysVersionKey } from './version-keys.js';

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

/** Bounds what a slow or vanished Redis can add to a request. */
const TIMEOUT_MS = TIMEOUTS.redisCommandMs;
const LOST_AFTER_MS = TIMEOUTS.redisLostAfterMs;
const MAX_RECONNECT_DELAY_MS = TIMEOUTS.redisMaxReconnectDelayMs;

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
  /** The counted request's span, while tracing is on and it is recorded: the call's span links to it. */
  readonly link: SpanContext | undefined;
}

const linkOf = (count: GatheredCount): SpanContext | undefined => count.link;

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
 * counts are handed to the limiter and the tokens to the watch, both here. The key set reads its
 * token and the key changes announced through `keySetVersions`, off the request path and behind the
 * same breaker.
 *
 * A circuit breaker (redis-breaker.ts) keeps a lost Redis off the request path; its probe is a count
 * of nothing, and a PING on the key set's client, and the watch is told of a loss and a return. A
 * call that is only slow (`timeoutMs`) is given up for that request alone, and the watch told what
 * it missed.
 */
export class RedisRequestRoundTrip {
  readonly windowMs: number;
  /** The key set's reads of its token and the key changes, for the held keys (KeySetVersionReader). */
  readonly keySetVersions: RedisKeySetVersionReader;
  private readonly counting: CountCalls;
  private readonly breaker: RedisBreaker;
  private readonly presence: InstancePresence;
  private readonly window: string;
  private readonly logger: Logger | undefined;
  private readonly watch: ChangesElsewhere | undefined;
  private readonly versionPrefix: string;
  private readonly keysVersionKey: string;
  private readonly tokens = new FreshTokens();
  private slow = 0;
  /** Calls sent and not yet answered or given up. */
  private callsWaiting = 0;
  /** A reply was handed out this loop turn: its requests' answers are this turn's work. */
  private answeredThisTurn = false;
  /** Counts made this loop turn, not yet sent. */
  private gathered: GatheredCount[] = [];
  /** Named in messages by hosts and ports only. */
  private readonly target: RedisTarget;
  /** The replication id of the Redis whose data the tokens seen came from (with a watch); unknown after a loss. */
  private server: string | undefined;

  constructor(options: RequestRoundTripOptions) {
    this.target = options.target;
    this.windowMs = options.windowMs ?? RATE_LIMIT_WINDOW_MS;
    this.window = String(this.windowMs);
    this.logger = options.logger;
    this.presence = new InstancePresence(options.instanceId ?? randomUUID(), options.instancesKey ?? DEFAULT_INSTANCES_KEY);
    this.watch = options.watch;
    this.versionPrefix = options.versionPrefix ?? DEFAULT_VERSION_PREFIX;
    this.keysVersionKey = keysVersionKey(this.versionPrefix);
    this.breaker = new RedisBreaker({
      coolDownMs: options.coolDownMs ?? TIMEOUTS.redisCoolDownMs,
      logger: this.logger,
      rereadsOnReturn: this.watch !== undefined,
      probe: () => Promise.all([this.keySetVersions.ping(), this.counting.run(...this.emptyCount())]),
      probeFailed: () => {
        this.keySetVersions.renewIfHung();
        this.counting.renewIfHung();
      },
      lost: () => this.watch?.sharingLost(),
      regained: () => {
        this.server = undefined;
        this.watch?.sharingRegained();
      },
    });
    // The count runs on every request: on connections of its own (topology-calls.ts).
    this.counting = countCallsFor(options.target, {
      withVersions: this.watch !== undefined,
      timeoutMs: options.timeoutMs ?? TIMEOUT_MS,
      lostAfterMs: options.lostAfterMs ?? LOST_AFTER_MS,
      maxReconnectDelayMs: MAX_RECONNECT_DELAY_MS,
    });
    this.keySetVersions = new RedisKeySetVersionReader({
      target: options.target, breaker: this.breaker, watch: this.watch, versionPrefix: this.versionPrefix, tokens: this.tokens,
    });
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
    if (!this.breaker.inUse()) return Promise.resolve(taker.notCounted(keyId, increment));
    return new Promise<T>((resolve) => {
      const gathered = this.gathered.push({ counterKey, keyId, partnerId, taker, increment, resolve: resolve as (value: unknown) => void, link: linkableContext() });
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
      if (!this.breaker.inUse()) this.notCounted(counts);
      else this.sendCounts(counts);
    }
  };

  /** The end of a turn in which a reply was handed out. */
  private readonly turnEnded = (): void => {
    this.answeredThisTurn = false;
  };

  private sendCounts(counts: readonly GatheredCount[]): void {
    const watch = this.watch;
    const keys = watch === undefined ? [this.presence.key] : [this.presence.key, this.keysVersionKey];
    const first = keys.length + 1;
    // The partners among the counts, each once: its catalog token is read once for all of them.
    const partners: string[] = [];
    for (const count of counts) {
      keys.push(count.counterKey);
      if (watch !== undefined && count.partnerId !== undefined && !partners.includes(count.partnerId)) partners.push(count.partnerId);
    }
    for (const partner of partners) keys.push(catalogVersionKey(this.versionPrefix, partner));
    const args = [this.window, this.presence.toRefresh(), this.window, String(first), String(counts.length), watch === undefined ? '' : this.tokens.next()];
    for (const count of counts) args.push(count.increment === 1 ? '1' : String(count.increment));
    this.callsWaiting += 1;
    const span = tracing() === undefined ? undefined : startSharedSpan('redis count', counts.map(linkOf), { 'db.system.name': 'redis', 'db.operation.name': 'EVALSHA', 'pcat.counts': counts.length, 'pcat.partners': partners.length });
    this.counting.run(keys, args).then(
      (reply) => {
        endSpan(span);
        this.callsWaiting -= 1;
        if (!this.answeredThisTurn) {
          this.answeredThisTurn = true;
          setImmediate(this.turnEnded);
        }
        this.deliver(counts, partners, reply);
      },
      (error: unknown) => {
        endSpan(span, error);
        this.callsWaiting -= 1;
        if (error instanceof SlowReplyError) {
          this.slow += counts.length;
          // Redis may only be slow: what these requests would have read is read from the database
          // instead, so a change announced before them is not missed.
          if (partners.length === 0) watch?.versionsMissed(undefined);
          for (const partner of partners) watch?.versionsMissed(partner);
        } else {
          this.breaker.lost(error);
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
      this.breaker.lost(new Error(`unexpected reply from the count script: ${JSON.stringify(reply)}`));
      this.notCounted(counts);
      return;
    }
    if (watch !== undefined) {
      this.sawServer(reply[reply.length - 1] as string, watch);
      // The tokens are read on one connection (to one node, on a Cluster), whose replies come back in
      // the order Redis ran the scripts, so a partner's token the watch holds only moves forward.
      // (The key-set token is also read on the key set's client: a reply from there seen out of
      // order only costs one more read of the key set.)
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

  /**
   * Resolves once connected to Redis; rejects if that takes longer than `timeoutMs`, and at once with
   * a RedisRefusedError when Redis refuses the user the settings name, which no wait mends.
   */
  async ready(timeoutMs = 5_000): Promise<void> {
    await this.keySetVersions.ready(timeoutMs);
    await this.countingConnected(timeoutMs);
    await this.countingLoggedIn();
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
    return this.keySetVersions.close();
  }

  /** Requests whose count was given up as slow since start, each counted on this instance's share. */
  slowCounts(): number {
    return this.slow;
  }

  /** True while Redis is taken as lost: it was lost and has not answered a probe since. */
  usingFallback(): boolean {
    return this.breaker.usingFallback();
  }

  /**
   * The count script's keys and arguments with no count in them, telling Redis this instance is
   * there: a write, so a Redis that will not write (READONLY) refuses it as it would a count, and the
   * breaker's probe finds a Redis that answers but will not count (a replica now) still lost.
   */
  private emptyCount(): [string[], string[]] {
    const keys = this.watch === undefined ? [this.presence.key] : [this.presence.key, this.keysVersionKey];
    const args = [this.window, this.presence.id, this.window, String(keys.length + 1), '0', this.watch === undefined ? '' : this.tokens.next()];
    return [keys, args];
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
