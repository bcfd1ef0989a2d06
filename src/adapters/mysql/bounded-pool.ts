import type { MysqlPool, MysqlPoolConnection, MysqlQueryResult } from 'kysely';
import type { ExecuteValues, Pool, PoolConnection, QueryError } from 'mysql2';
import { DatabaseError, databaseErrorFrom } from './database-error.js';

export interface PoolBounds {
  /** Connections lent at once; the wrapper queues the rest itself, so mysql2's own queue stays empty. */
  readonly connectionLimit: number;
  /** Callers that may wait for a connection beyond those; one more fails at once. */
  readonly queueLimit: number;
  /**
   * How long a statement may take to be answered. For the first statement on a lent connection
   * the clock starts when the connection was asked for: waiting in the queue, connecting and
   * setting up the session all count against the same deadline.
   */
  readonly queryTimeoutMs: number;
  /** Statements each new connection runs once before it is first lent. */
  readonly sessionSetup: readonly string[];
  /** A replica's pool: what each connection's server must have applied before the connection is lent. */
  readonly catchUp?: CatchUp;
}

/**
 * What a replica's connections must have applied before they are lent (replica-reads.ts). Each
 * connection waits once a version, on its own server: behind a load balancer, connections may
 * reach different replicas.
 */
export interface CatchUp {
  /** Grows whenever the position connections must reach moves. */
  version(): number;
  /** The statement that waits for that version's position, answering `reached`, and how long the server may wait; null: nothing to wait for. */
  statement(version: number): { readonly sql: string; readonly parameters: unknown[]; readonly waitMs: number } | null;
  /** A connection's server reached that version's position. */
  reached(version: number): void;
}

/** Statement texts sent as server-side prepared statements, so their values never enter the SQL text. */
const preparedOnServer = new Set<string>();

/** From now on, every pool sends this exact statement text with mysql2 `execute` instead of `query`. */
export function prepareOnServer(sqlText: string): void {
  preparedOnServer.add(sqlText);
}

type Callback = (error: unknown, connection: MysqlPoolConnection) => void;

/** What a pool is doing now. */
export interface PoolUse {
  /** Connections lent, or being opened or set up for a caller. */
  readonly inUse: number;
  /** Open connections waiting to be lent. */
  readonly idle: number;
  /** Callers waiting for a connection. */
  readonly waiting: number;
  /**
   * Seconds callers have spent waiting for a connection since the pool was made, all together
   * (the wait ends when a connection is handed on, the caller's deadline passes or the pool
   * closes). Its growth over a span, divided by the span, is the mean number of callers waiting.
   */
  readonly waitedSeconds: number;
}

/** A pool that can say what it is doing. */
export interface MeasuredPool extends MysqlPool {
  use(): PoolUse;
}

interface Waiter {
  /** When it began to wait, by performance.now(). */
  readonly since: number;
  readonly deadline: number;
  readonly callback: Callback;
  readonly timer: NodeJS.Timeout;
}

/** What the wrapper knows of one raw connection. */
interface Held {
  readonly wrapper: MysqlPoolConnection;
  lent: boolean;
  setUp: boolean;
  /** The deadline of the next statement when it is the first one since the connection was asked for. */
  firstDeadline: number | null;
  /** The failure count when this connection last answered: one that sat idle through a failure is not trusted. */
  trustedAt: number;
  /** The CatchUp version this connection's server was last seen to have reached. */
  caughtUp: number;
}

/**
 * A mysql2 pool as Kysely wants it, with a bounded queue and a deadline on every statement.
 * A statement that times out leaves its connection mid-protocol, so that connection is destroyed
 * rather than returned; after a timeout or a lost connection, connections that sat idle meanwhile
 * are destroyed instead of lent (a black-holed socket looks open to mysql2 and would cost a full
 * timeout each once the database is back). Every error that leaves is a DatabaseError.
 */
export function boundedPool(pool: Pool, bounds: PoolBounds): MeasuredPool {
  const held = new WeakMap<PoolConnection, Held>();
  const waiting = new Set<Waiter>();
  // mysql2 throws an uncaught error if the pool ends while a connection is still being opened.
  const opening = new Set<Promise<void>>();
  let taken = 0;
  let failures = 0;
  let waitedMs = 0;
  let closed = false;

  const timeout = (failure: 'no connection in time' | 'no answer in time'): DatabaseError => new DatabaseError(failure);

  function fail(error: unknown): DatabaseError {
    const wrapped = databaseErrorFrom(error);
    // A server now read-only may be a former primary behind the same address: no idle connection is trusted either.
    if (wrapped.failure === 'connection failed' || wrapped.failure === 'no answer in time' || wrapped.failure === 'read only') failures += 1;
    return wrapped;
  }

  /** Hands the freed slot to the longest waiter, if any. */
  function freeSlot(): void {
    taken -= 1;
    const [next] = waiting;
    if (next === undefined) return;
    waiting.delete(next);
    clearTimeout(next.timer);
    waitedMs += performance.now() - next.since;
    taken += 1;
    obtain(next.deadline, next.callback);
  }

  function giveBack(raw: PoolConnection, state: Held): void {
    if (!state.lent) return;
    state.lent = false;
    raw.release();
    freeSlot();
  }

  function discard(raw: PoolConnection, state: Held): void {
    if (!state.lent) return;
    state.lent = false;
    raw.destroy();
    freeSlot();
  }

  function stateOf(raw: PoolConnection): Held {
    let state = held.get(raw);
    if (state === undefined) {
      // Kysely keys its per-connection state on the object it is given: one wrapper per raw connection.
      state = { wrapper: wrapperOf(raw), lent: false, setUp: false, firstDeadline: null, trustedAt: failures, caughtUp: -1 };
      held.set(raw, state);
    }
    return state;
  }

  function run(raw: PoolConnection, state: Held, sql: string, parameters: unknown[], callback: (error: unknown, result: MysqlQueryResult) => void): void {
    const deadline = state.firstDeadline ?? Date.now() + bounds.queryTimeoutMs;
    state.firstDeadline = null;
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      process.nextTick(() => callback(timeout('no answer in time'), undefined as never));
      return;
    }
    // A timer of our own: mysql2's per-query `timeout` option (an options object) costs about
    // 15 microseconds of CPU per query, a tenth of a key read.
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      // Counted before the slot is handed on, so idle connections are no longer trusted.
      const error = fail(timeout('no answer in time'));
      discard(raw, state);
      callback(error, undefined as never);
    }, remaining);
    const answered = (error: QueryError | null, result: unknown): void => {
      if (timedOut) return;
      clearTimeout(timer);
      if (error === null) {
        state.trustedAt = failures;
        callback(null, result as MysqlQueryResult);
        return;
      }
      const wrapped = fail(error);
      // A fatal error closed the connection: it must not go back to the pool. Nor may one to a server
      // that now refuses writes: it is opened anew, to where the address leads now.
      if (error.fatal || wrapped.failure === 'read only') discard(raw, state);
      callback(wrapped, undefined as never);
    };
    if (preparedOnServer.has(sql)) raw.execute(sql, parameters as ExecuteValues[], answered);
    else raw.query(sql, parameters, answered);
  }

  /** Runs the session setup, every statement by the caller's deadline, then lends the connection. */
  function setUp(raw: PoolConnection, state: Held, statements: readonly string[], deadline: number, callback: Callback): void {
    const [first, ...rest] = statements;
    state.firstDeadline = deadline;
    if (first === undefined) {
      state.setUp = true;
      lend(raw, state, callback);
      return;
    }
    run(raw, state, first, [], (error) => {
      if (error === null) {
        setUp(raw, state, rest, deadline, callback);
        return;
      }
      discard(raw, state);
      callback(error, undefined as never);
    });
  }

  /** Asks mysql2 for a connection on a slot already taken; answers by the deadline either way. */
  function obtain(deadline: number, callback: Callback): void {
    let gaveUp = false;
    const timer = setTimeout(() => {
      gaveUp = true;
      callback(timeout('no connection in time'), undefined as never);
    }, Math.max(0, deadline - Date.now()));
    let opened = (): void => undefined;
    const attempt = new Promise<void>((resolve) => {
      opened = resolve;
    });
    opening.add(attempt);
    pool.getConnection((error, raw) => {
      opening.delete(attempt);
      opened();
      if (error !== null) {
        const wrapped = fail(error);
        freeSlot();
        if (!gaveUp) {
          clearTimeout(timer);
          callback(wrapped, undefined as never);
        }
        return;
      }
      const state = stateOf(raw);
      if (state.trustedAt < failures) {
        // It sat idle through a failure: a fresh one costs a connect, a dead one a whole timeout.
        raw.destroy();
        if (gaveUp) freeSlot();
        else {
          clearTimeout(timer);
          obtain(deadline, callback);
        }
        return;
      }
      state.lent = true;
      if (gaveUp) {
        // Too late for this caller: it goes back to the pool for the next one.
        giveBack(raw, state);
        return;
      }
      clearTimeout(timer);
      if (state.setUp) {
        state.firstDeadline = deadline;
        lend(raw, state, callback);
      } else {
        setUp(raw, state, bounds.sessionSetup, deadline, callback);
      }
    });
  }

  /**
   * Hands the connection on, once its server has applied what reads must see (CatchUp). A server
   * that has not within the wait gets the connection back to the pool and the caller 'replica behind'.
   */
  function lend(raw: PoolConnection, state: Held, callback: Callback): void {
    const { catchUp } = bounds;
    const version = catchUp?.version() ?? 0;
    const wait = catchUp === undefined || state.caughtUp >= version ? null : catchUp.statement(version);
    if (wait === null) {
      state.caughtUp = version;
      callback(null, state.wrapper);
      return;
    }
    state.firstDeadline = Date.now() + wait.waitMs + bounds.queryTimeoutMs;
    run(raw, state, wait.sql, wait.parameters, (error, result) => {
      if (error !== null || !reachedIn(result)) {
        giveBack(raw, state);
        callback(error ?? new DatabaseError('replica behind'), undefined as never);
        return;
      }
      state.caughtUp = version;
      catchUp!.reached(version);
      // The caller's statement has a deadline of its own, the wait spent.
      state.firstDeadline = Date.now() + bounds.queryTimeoutMs;
      callback(null, state.wrapper);
    });
  }

  function wrapperOf(raw: PoolConnection): MysqlPoolConnection {
    function query(sql: string, parameters: unknown[]): ReturnType<PoolConnection['query']>;
    function query(sql: string, parameters: unknown[], callback: (error: unknown, result: MysqlQueryResult) => void): void;
    function query(
      sql: string,
      parameters: unknown[],
      callback?: (error: unknown, result: MysqlQueryResult) => void,
    ): ReturnType<PoolConnection['query']> | undefined {
      // Only Kysely's streaming reads come without a callback; none is used while serving.
      if (callback === undefined) return raw.query({ sql, timeout: bounds.queryTimeoutMs }, parameters);
      run(raw, stateOf(raw), sql, parameters, callback);
      return undefined;
    }
    return { query, release: () => giveBack(raw, stateOf(raw)) };
  }

  return {
    use: () => {
      const now = performance.now();
      let stillWaitingMs = 0;
      for (const waiter of waiting) stillWaitingMs += now - waiter.since;
      return { inUse: taken, idle: idleConnections(pool), waiting: waiting.size, waitedSeconds: (waitedMs + stillWaitingMs) / 1000 };
    },
    getConnection: (callback) => {
      const deadline = Date.now() + bounds.queryTimeoutMs;
      if (closed) {
        process.nextTick(() => callback(new DatabaseError('pool closed'), undefined as never));
      } else if (taken < bounds.connectionLimit) {
        taken += 1;
        obtain(deadline, callback);
      } else if (waiting.size >= bounds.queueLimit) {
        process.nextTick(() => callback(new DatabaseError('queue full'), undefined as never));
      } else {
        const waiter: Waiter = {
          since: performance.now(),
          deadline,
          callback,
          timer: setTimeout(() => {
            waiting.delete(waiter);
            waitedMs += performance.now() - waiter.since;
            callback(timeout('no connection in time'), undefined as never);
          }, bounds.queryTimeoutMs),
        };
        waiting.add(waiter);
      }
    },
    end: (callback) => {
      closed = true;
      for (const waiter of waiting) {
        clearTimeout(waiter.timer);
        waitedMs += performance.now() - waiter.since;
        waiter.callback(new DatabaseError('pool closed'), undefined as never);
      }
      waiting.clear();
      void Promise.all(opening).then(() => {
        pool.end(callback);
      });
    },
  };
}

/** Whether a wait statement's one row says `reached`. */
function reachedIn(result: MysqlQueryResult | undefined): boolean {
  const [row] = Array.isArray(result) ? (result as Array<{ reached?: unknown }>) : [];
  return row?.reached === 1;
}

/**
 * mysql2 keeps its idle connections in a queue it does not publish; the metrics read its length
 * (a test checks it is there), and 0 if a later mysql2 renames it.
 */
function idleConnections(pool: Pool): number {
  const length = (pool as unknown as { _freeConnections?: { length?: unknown } })._freeConnections?.length;
  return typeof length === 'number' ? length : 0;
}
