import { createHash } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';
import { COUNT_AND_VERSIONS_SCRIPT, COUNT_SCRIPT, COUNTERS_SCRIPT, INSTANCES_SCRIPT, VERSIONS_SCRIPT } from './count-scripts.js';
import { ioredisClient, type RedisTarget } from './redis-target.js';

/**
 * The request path's per-turn call: the count script (count-scripts.ts) run with its keys and
 * arguments, answering as it does. A call not answered in time rejects with a SlowReplyError (Redis
 * may only be slow); any other rejection means Redis is lost or will not count.
 */
export interface CountCalls {
  run(keys: readonly string[], args: readonly string[]): Promise<unknown>;
  /** Resolves once calls can be sent (never rejects: a failure to connect is a failed call's to report). */
  whenConnected(): Promise<void>;
  /**
   * Opens the connection anew if it has connected but never became ready: one opened during a
   * partition waits for its ready check's answer for good.
   */
  renewIfHung(): void;
  close(): void;
}

export interface CountCallsOptions {
  /** With the version tokens (COUNT_AND_VERSIONS_SCRIPT), or the counts alone (COUNT_SCRIPT). */
  readonly withVersions: boolean;
  readonly timeoutMs: number;
  /** How long Redis may answer nothing while calls wait before it is taken as lost. */
  readonly lostAfterMs: number;
  readonly maxReconnectDelayMs: number;
}

/**
 * The calls for a target, on an ioredis client of their own: it follows a Sentinel primary and a
 * Cluster's slots, and, for one Redis, costs some 6 µs of CPU a call more than the connection of
 * our own it replaced (21 against 27 µs a call of 35 counts: under 0.2 µs an answer, 0.6 % of a
 * production answer; docs/performance-history.md). On a Cluster each call is split by slot (ClusterCountCalls).
 */
export function countCallsFor(target: RedisTarget, options: CountCallsOptions): CountCalls {
  const script = options.withVersions ? COUNT_AND_VERSIONS_SCRIPT : COUNT_SCRIPT;
  if (target.kind === 'cluster') return new ClusterCountCalls(silenceWatch(target, options), options.withVersions);
  return scriptCalls(target, script, options);
}

/** One Lua script run whole with each call's keys and arguments, on one Redis or a Sentinel primary. */
export function scriptCalls(target: RedisTarget, lua: string, options: Omit<CountCallsOptions, 'withVersions'>): CountCalls {
  return new WholeCountCalls(silenceWatch(target, options), lua);
}

function silenceWatch(target: RedisTarget, options: Omit<CountCallsOptions, 'withVersions'>): SilenceWatch {
  const client = ioredisClient(target, {
    // Without a connection (a failover under way) a call fails at once: the breaker counts on shares.
    enableOfflineQueue: false,
    connectTimeout: options.timeoutMs,
    // No commandTimeout: the calls time themselves (SilenceWatch), and a late reply still counts.
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 100, options.maxReconnectDelayMs),
    // On a Cluster the calls of one turn to one node go in one write.
    enableAutoPipelining: target.kind === 'cluster',
  });
  client.on('error', () => undefined);
  return new SilenceWatch(client, options.timeoutMs, options.lostAfterMs);
}

/** A call given up after `timeoutMs` with nothing wrong seen: Redis may only be slow. */
export class SlowReplyError extends Error {}

/**
 * A Lua script run by its SHA1, and sent whole once where Redis lacks it (a new primary, a flushed
 * script cache). Sent as EVALSHA, not as a command of ioredis's `defineCommand`: ioredis groups a
 * Cluster's calls by the first key of a command it knows, and of one it does not, by its first
 * argument, which for a script of many keys is their number.
 */
class Script {
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(client: Redis | Cluster, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
      return client.eval(this.lua, keys.length, ...keys, ...args);
    }
  }
}

const INSTANCES = new Script(INSTANCES_SCRIPT);
const COUNTERS = new Script(COUNTERS_SCRIPT);
const VERSIONS = new Script(VERSIONS_SCRIPT);

/**
 * The calls' outcome as the round trip takes it: a call not answered within `timeoutMs` is given up
 * as slow (its reply, when it comes, still shows Redis alive), unless nothing at all was heard for
 * `lostAfterMs` while calls waited: then Redis is lost, and the connections are made anew (one that
 * carries nothing, as a partition leaves it, never recovers by itself).
 *
 * The timer's end waits for the turn's end: timers run before the loop reads its sockets, so after
 * a turn this process was held up, the reply may be waiting unread, and it is taken if it comes.
 */
class SilenceWatch {
  /** When the first call sent since the last reply was sent; null while none waits. */
  private waitingSince: number | null = null;
  /** The connection was dropped as silent: its status says ready until its close is seen. */
  private dropped = false;

  constructor(
    private readonly client: Redis | Cluster,
    private readonly timeoutMs: number,
    private readonly lostAfterMs: number,
  ) {}

  call(script: Script, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    this.waitingSince ??= performance.now();
    return new Promise((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(this.silence());
      }), this.timeoutMs);
      script.run(this.client, keys, args).then((reply) => {
        this.waitingSince = null;
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(reply);
      }, (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      });
    });
  }

  /** A call given up: slow, or, after `lostAfterMs` without a word, lost. */
  private silence(): Error {
    if (this.waitingSince === null || performance.now() - this.waitingSince <= this.lostAfterMs) {
      return new SlowReplyError(`Redis did not answer within ${this.timeoutMs} ms`);
    }
    this.waitingSince = null;
    this.renew();
    return new Error(`Redis answered nothing for ${this.lostAfterMs} ms`);
  }

  renewIfHung(): void {
    if (this.client.status === 'connect') this.renew();
  }

  /** A new connection in place of this one; until it is ready, calls are refused at once. */
  private renew(): void {
    if (!this.dropped) {
      this.dropped = true;
      this.client.once('ready', () => {
        this.dropped = false;
      });
    }
    this.client.disconnect(true);
  }

  whenConnected(): Promise<void> {
    if (this.client.status === 'ready' && !this.dropped) return Promise.resolve();
    return new Promise((resolve) => this.client.once('ready', () => resolve()));
  }

  close(): void {
    this.client.disconnect();
  }
}

/** The calls on one client: connecting, renewing and closing are its. */
abstract class CallsOnClient implements CountCalls {
  constructor(protected readonly calls: SilenceWatch) {}

  abstract run(keys: readonly string[], args: readonly string[]): Promise<unknown>;

  whenConnected(): Promise<void> {
    return this.calls.whenConnected();
  }

  renewIfHung(): void {
    this.calls.renewIfHung();
  }

  close(): void {
    this.calls.close();
  }
}

/** A script whole, on one Redis or a Sentinel's primary. */
class WholeCountCalls extends CallsOnClient {
  private readonly script: Script;

  constructor(calls: SilenceWatch, lua: string) {
    super(calls);
    this.script = new Script(lua);
  }

  run(keys: readonly string[], args: readonly string[]): Promise<unknown> {
    return this.calls.call(this.script, keys, args);
  }
}

/**
 * The count script's work on a Cluster, where one call's keys must share a slot: the instances in a
 * call of their own (only when this instance tells Redis it is there), the version tokens in one
 * (they share their prefix's hash tag), and the counters in one a slot; all sent in the same turn,
 * so ioredis writes each node's in one pipeline. The replies are put together as the whole script's.
 * The replication id is the tokens' node's: a switch there may lose announcements, where one
 * elsewhere loses only counts.
 */
class ClusterCountCalls extends CallsOnClient {
  constructor(
    calls: SilenceWatch,
    private readonly withVersions: boolean,
  ) {
    super(calls);
  }

  async run(keys: readonly string[], args: readonly string[]): Promise<unknown> {
    const [window, instanceId, ttl, firstText, countText, fresh] = args as [string, string, string, string, string, string];
    const first = Number(firstText) - 1;
    const counters = keys.slice(first, first + Number(countText));
    const increments = args.slice(6);
    const instances = instanceId === '' ? Promise.resolve(-1) : this.calls.call(INSTANCES, [keys[0]!], [window, instanceId, ttl]);
    const versions = this.withVersions ? this.calls.call(VERSIONS, [keys[1]!, ...keys.slice(first + counters.length)], [fresh]) : Promise.resolve([]);
    const bySlot = new Map<number, number[]>();
    counters.forEach((key, at) => {
      const slot = calculateSlot(key);
      const group = bySlot.get(slot);
      if (group === undefined) bySlot.set(slot, [at]);
      else group.push(at);
    });
    const groups = [...bySlot.values()];
    const counted = groups.map((group) => this.calls.call(COUNTERS, group.map((at) => counters[at]!), [window, ...group.map((at) => increments[at]!)]));
    const [instancesReply, versionsReply, ...countedReplies] = await Promise.all([instances, versions, ...counted]);
    return wholeReply(instancesReply, versionsReply, groups, countedReplies, counters.length, this.withVersions);
  }
}

/** The split calls' replies as the count script would give them: `{instances, [key-set token], count, msLeft, ..., [catalog tokens, id]}`. */
function wholeReply(instances: unknown, versions: unknown, groups: readonly number[][], counted: readonly unknown[], counters: number, withVersions: boolean): unknown {
  if (!Array.isArray(versions)) return versions;
  const pairs: unknown[] = new Array<unknown>(2 * counters);
  for (let g = 0; g < groups.length; g += 1) {
    const reply = counted[g];
    if (!Array.isArray(reply)) return reply;
    groups[g]!.forEach((at, i) => {
      pairs[2 * at] = reply[2 * i];
      pairs[2 * at + 1] = reply[2 * i + 1];
    });
  }
  if (!withVersions) return [instances, ...pairs];
  const tokens = versions as unknown[];
  return [instances, tokens[0], ...pairs, ...tokens.slice(1)];
}
