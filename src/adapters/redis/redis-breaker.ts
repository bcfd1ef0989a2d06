import type { Logger } from 'pino';
import { reasonOf } from '../../domain/failure-reason.js';

/** What the breaker is told by, and tells, the round trip that holds it. */
export interface RedisBreakerOptions {
  /** How long to leave Redis alone after it is lost before probing it again. */
  readonly coolDownMs: number;
  readonly logger: Logger | undefined;
  /** Whether a return makes the keys and answers held be read again: said when Redis is back. */
  readonly rereadsOnReturn: boolean;
  /** Asks Redis whether it is back: resolves when it is. */
  readonly probe: () => Promise<unknown>;
  /** After a probe that failed: what a partition may have left hung is opened anew. */
  readonly probeFailed: () => void;
  /** Redis was taken as lost: by every call that found it so, not only the first. */
  readonly lost: () => void;
  /** A probe found Redis back; told before the return is logged. */
  readonly regained: () => void;
}

/**
 * Keeps a lost Redis off the request path: when Redis is lost (its connection refused or closed, or
 * nothing answered for `lostAfterMs`) no call is made for `coolDownMs`, then one background probe
 * decides whether to go back; the holder is told of both. A call that is only slow is not the
 * breaker's: the holder gives it up for that request alone.
 */
export class RedisBreaker {
  private current: { state: 'closed' } | { state: 'open'; until: number } | { state: 'probing' } = { state: 'closed' };
  /** The caller of `ready` was told Redis is away: the first request that finds it so says nothing more. */
  private lossTold = false;

  constructor(private readonly options: RedisBreakerOptions) {}

  /** Whether Redis may be asked now; past the cool-down, starts the probe and answers no. */
  inUse(): boolean {
    if (this.current.state === 'closed') return true;
    if (this.current.state === 'open' && performance.now() >= this.current.until) this.probe();
    return false;
  }

  /** True while Redis is taken as lost: it was lost and has not answered a probe since. */
  usingFallback(): boolean {
    return this.current.state !== 'closed';
  }

  /** The caller of `ready` was told Redis is away. */
  lossToldAtStart(): void {
    this.lossTold = true;
  }

  /** Connected after all: a later loss is a new one, to be told. */
  connected(): void {
    this.lossTold = false;
  }

  lost(error: unknown): void {
    const wasClosed = this.current.state === 'closed';
    if (this.current.state !== 'probing') this.current = { state: 'open', until: performance.now() + this.options.coolDownMs };
    this.options.lost();
    const told = this.lossTold;
    this.lossTold = false;
    if (wasClosed && !told) {
      const reason = reasonOf(error);
      const fix = refusalFix(reason);
      this.options.logger?.warn({ reason, ...(fix === undefined ? {} : { fix }) }, 'rate limiter: Redis unavailable; limiting on this instance\'s share until it returns');
    }
  }

  /**
   * Off the request path, so a hung server never delays a request. A probe that fails (a Redis that
   * answers but will not count, say) leaves Redis lost, asked again after the next cool-down, without
   * a word more than the loss's.
   */
  private probe(): void {
    this.current = { state: 'probing' };
    this.options.probe().then(
      () => {
        this.current = { state: 'closed' };
        this.lossTold = false;
        this.options.regained();
        this.options.logger?.info(this.options.rereadsOnReturn
          ? 'rate limiter: Redis is back; counting in Redis again, and re-reading keys and answers held'
          : 'rate limiter: Redis is back; counting in Redis again');
      },
      () => {
        this.current = { state: 'open', until: performance.now() + this.options.coolDownMs };
        this.options.probeFailed();
      },
    );
  }
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
