import { setTimeout as sleep } from 'node:timers/promises';
import type { Span } from '@opentelemetry/api';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { ChangePositions } from '../../application/instances/change-versions.js';
import { reasonOf } from '../../domain/failure-reason.js';
import { TIMEOUTS } from '../timeouts.js';
import type { CatchUp, PoolUse } from './bounded-pool.js';
import type { Database } from './database.js';
import { databaseErrorIn } from './database-advice.js';
import type { DatabaseFailure } from './database-error.js';
import { activeSpan, runIn, tracedUnder } from '../tracing/tracing.js';
import { isPosition, mergePositions, primaryPosition, waitForPosition } from './gtid-position.js';

/** How many changes' times are kept for the lag: a replica further behind shows a lower lag. */
const SEEN_TIMES_KEPT = 10_000;

/** Why a read that could have gone to a replica went to the primary instead (a metric's label). */
export type PrimaryReadReason = 'no_position' | 'lagging' | 'unreachable';

/**
 * The position every replica read must reach: the positions of all the changes this instance has
 * seen, merged (docs/several-instances.md, read your writes). A primary's positions only grow, so a
 * replica that reached the merged one reached each. When a change may have gone unseen, the
 * primary's own position is read once, by the next read that needs it, and merged in; so it is
 * before the first read, since nothing tells what was committed before the process started.
 */
export class ReadPositions implements ChangePositions {
  private position = '';
  private versionCount = 0;
  /** When each version was first seen (performance.now()), for the lag: the latest SEEN_TIMES_KEPT. */
  private readonly seenAt = new Map<number, number>();
  /** Grows with every `unknown()`; a read of the primary's position settles those counted when it started. */
  private unknowns = 1;
  private settled = 0;
  /** The read of the primary's position in flight, and the count of `unknown()` it settles. */
  private reading: { readonly upTo: number; readonly done: Promise<boolean> } | null = null;

  seen(position: string): void {
    // A token whose position neither server could have written is taken as one that carries none.
    if (!isPosition(position)) {
      this.unknown();
      return;
    }
    const merged = mergePositions(this.position, position);
    if (merged === this.position) return;
    this.position = merged;
    this.versionCount += 1;
    this.seenAt.set(this.versionCount, performance.now());
    // A replica further behind than this shows the lag since the oldest time kept: less than its own.
    if (this.seenAt.size > SEEN_TIMES_KEPT) this.seenAt.delete(this.versionCount - SEEN_TIMES_KEPT);
  }

  unknown(): void {
    this.unknowns += 1;
  }

  /** Grows whenever the position moves. */
  get version(): number {
    return this.versionCount;
  }

  get current(): string {
    return this.position;
  }

  /** When `version` was first seen, or the oldest version kept if it is older than that. */
  seenSince(version: number): number | undefined {
    return this.seenAt.get(Math.max(version, this.versionCount - SEEN_TIMES_KEPT + 1));
  }

  /** Whether nothing may have gone unseen since the primary's position was last read. */
  get known(): boolean {
    return this.settled >= this.unknowns;
  }

  /**
   * Whether the position is known: at once when nothing may have gone unseen; else once the
   * primary's position is read and merged; false when it cannot be read. Reads waiting together
   * share one read of it, unless a change may have gone unseen after that read began: it could
   * predate the change, so another is made.
   */
  settle(readPrimary: () => Promise<string>): Promise<boolean> | true {
    if (this.known) return true;
    if (this.reading !== null && this.reading.upTo >= this.unknowns) return this.reading.done;
    const reading = { upTo: this.unknowns, done: this.readPrimary(readPrimary, this.unknowns) };
    this.reading = reading;
    void reading.done.finally(() => {
      if (this.reading === reading) this.reading = null;
    });
    return reading.done;
  }

  private async readPrimary(read: () => Promise<string>, upTo: number): Promise<boolean> {
    try {
      this.seen(await read());
    } catch {
      return false;
    }
    this.settled = Math.max(this.settled, upTo);
    return true;
  }
}

/**
 * Failures that take a replica out until it answers again: no connection, or none in time, or no
 * answer in time. Others (a full queue, a statement refused) send that one read to the primary alone.
 */
const OUT_OF_REACH: ReadonlySet<DatabaseFailure> = new Set(['connection failed', 'no connection in time', 'no answer in time']);

/** What a replica is now: usable, or sent no reads until it is found caught up, or reachable, again. */
type ReplicaState = 'usable' | 'lagging' | 'unreachable';

/** One replica: its pool's handle, the read adapters over it, and what is known of it. */
export class Replica<Ports> implements CatchUp {
  state: ReplicaState = 'usable';
  /** The last version a connection to it was seen to have reached. */
  reachedVersion = 0;

  readonly db: Kysely<Database>;
  readonly ports: Ports;
  /** What the replica's pool is doing now, for the metrics. */
  readonly poolUse: () => PoolUse;

  /** `open` makes the replica's pool, whose connections catch up through this replica before they are lent. */
  constructor(
    /** host:port, for logs and metrics: never the password. */
    readonly name: string,
    open: (catchUp: CatchUp) => { readonly db: Kysely<Database>; readonly poolUse: () => PoolUse },
    portsOf: (db: Kysely<Database>) => Ports,
    private readonly positions: ReadPositions,
    /** DATABASE_REPLICA_WAIT_MS. */
    readonly waitMs: number,
  ) {
    const opened = open(this);
    this.db = opened.db;
    this.poolUse = opened.poolUse;
    this.ports = portsOf(this.db);
  }

  version(): number {
    return this.positions.version;
  }

  statement(): { sql: string; parameters: unknown[]; waitMs: number } | null {
    const position = this.positions.current;
    return position === '' ? null : { ...waitForPosition(position, this.waitMs / 1_000), waitMs: this.waitMs };
  }

  reached(version: number): void {
    if (version > this.reachedVersion) this.reachedVersion = version;
  }

  /** Seconds since the oldest change not yet seen applied here was seen; 0 when all are. */
  lagSeconds(): number {
    if (this.reachedVersion >= this.positions.version) return 0;
    const since = this.positions.seenSince(this.reachedVersion + 1);
    return since === undefined ? 0 : (performance.now() - since) / 1_000;
  }
}

export interface ReplicaRouterOptions {
  /** Whether changes are being seen now (the shared store reachable); while not, nothing says what a replica lacks. */
  readonly isShared: () => boolean;
  readonly logger?: Logger | undefined;
}

/**
 * Sends each read to a replica that has applied every change this instance has seen, and to the
 * primary when none can be trusted to: while changes cannot be seen, or the primary's position
 * cannot be read; while every replica is behind (its wait for a position ran out) or out of reach.
 * A read a replica fails is made again on the primary. A replica taken out is tried again in the
 * background until it answers, caught up, and then takes reads again.
 */
export class ReplicaRouter<Ports> {
  private turn = 0;
  private readonly stop = new AbortController();
  private readonly readPrimary = (): Promise<string> => primaryPosition(this.primary.db);
  /** Reads sent to the primary that a replica could have taken, by why. */
  readonly primaryReads: Record<PrimaryReadReason, number> = { no_position: 0, lagging: 0, unreachable: 0 };

  constructor(
    private readonly primary: { readonly db: Kysely<Database>; readonly ports: Ports },
    readonly replicas: ReadonlyArray<Replica<Ports>>,
    private readonly positions: ReadPositions,
    private readonly options: ReplicaRouterOptions,
  ) {}

  /** The read, on a replica that can take it, else on the primary. */
  async read<T>(use: (ports: Ports) => Promise<T>): Promise<T> {
    // The read's span when traced, taken before any await: told where the read went, and why.
    const span = activeSpan();
    const replica = this.pick();
    if (typeof replica === 'string') return this.onPrimary(use, replica, span);
    const settled = this.positions.settle(this.readPrimary);
    // A traced read's wait for the primary's position is a span of the read's.
    if (settled !== true && !(await (span === undefined ? settled : tracedUnder(span, 'primary position read', {}, () => settled)))) return this.onPrimary(use, 'no_position', span);
    // On a replica, whose statement waits for the position first.
    span?.setAttributes({ 'pcat.db.target': 'replica', 'pcat.db.replica_wait_ms': replica.waitMs });
    try {
      return await (span === undefined ? use(replica.ports) : runIn(span, () => use(replica.ports)));
    } catch (error) {
      const failure = databaseErrorIn(error);
      if (failure === null || failure.failure === 'pool closed') throw error;
      // What the replica could not read, the primary can; a statement the replica refused goes there too.
      if (failure.failure === 'replica behind') this.takeOut(replica, 'lagging');
      else if (OUT_OF_REACH.has(failure.failure)) this.takeOut(replica, 'unreachable', reasonOf(failure));
      return this.onPrimary(use, failure.failure === 'replica behind' ? 'lagging' : 'unreachable', span);
    }
  }

  /** The next usable replica in turn, or why there is none. */
  private pick(): Replica<Ports> | PrimaryReadReason {
    if (!this.options.isShared()) return 'no_position';
    const { replicas } = this;
    for (let i = 0; i < replicas.length; i += 1) {
      const replica = replicas[(this.turn + i) % replicas.length]!;
      if (replica.state === 'usable') {
        this.turn = (this.turn + i + 1) % replicas.length;
        return replica;
      }
    }
    return replicas.some((replica) => replica.state === 'lagging') ? 'lagging' : 'unreachable';
  }

  private onPrimary<T>(use: (ports: Ports) => Promise<T>, reason: PrimaryReadReason, span: Span | undefined): Promise<T> {
    this.primaryReads[reason] += 1;
    if (span === undefined) return use(this.primary.ports);
    span.setAttributes({ 'pcat.db.target': 'primary', 'pcat.db.primary_reason': reason });
    return runIn(span, () => use(this.primary.ports));
  }

  private takeOut(replica: Replica<Ports>, state: 'lagging' | 'unreachable', reason?: string): void {
    if (replica.state !== 'usable') return;
    replica.state = state;
    this.options.logger?.warn(
      { replica: replica.name, ...(reason === undefined ? {} : { reason }) },
      state === 'lagging'
        ? 'database replica: has not applied the changes seen within DATABASE_REPLICA_WAIT_MS; its reads go to the primary until it has'
        : 'database replica: out of reach; its reads go to the primary until it answers',
    );
    void this.bringBack(replica);
  }

  /**
   * Tries the replica until it answers having applied every change seen: each try's connection waits
   * for the position first (the pool's CatchUp), so a replica behind paces the tries itself; one out
   * of reach is tried again after a pause.
   */
  private async bringBack(replica: Replica<Ports>): Promise<void> {
    while (!this.stop.signal.aborted) {
      const startedAt = performance.now();
      try {
        await sql`select 1`.execute(replica.db);
        replica.state = 'usable';
        this.options.logger?.info({ replica: replica.name }, 'database replica: caught up and reachable; it takes reads again');
        return;
      } catch (error) {
        // A wait that ran its course paced this try; anything quicker is paused after.
        if (databaseErrorIn(error)?.failure === 'replica behind' && performance.now() - startedAt >= replica.waitMs / 2) continue;
        await sleep(TIMEOUTS.keySetRetryMs, undefined, { signal: this.stop.signal, ref: false }).catch(() => undefined);
      }
    }
  }

  /** Stops the tries in the background; the pools are closed by their owner. */
  close(): void {
    this.stop.abort();
  }
}
