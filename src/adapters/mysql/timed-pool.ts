import type { MysqlPool, MysqlPoolConnection, MysqlQueryResult } from 'kysely';
import type { Pool, PoolConnection, QueryError } from 'mysql2';

/**
 * A mysql2 pool as Kysely wants it, where every query carries a client-side timeout.
 * A query that times out leaves its connection mid-protocol, so that connection is
 * destroyed rather than returned to the pool; the pool opens a fresh one when needed.
 */
export function withQueryTimeout(pool: Pool, timeoutMs: number): MysqlPool {
  // Kysely keys its per-connection state on the object it is given: one wrapper per raw connection.
  const wrappers = new WeakMap<PoolConnection, MysqlPoolConnection>();
  const wrap = (raw: PoolConnection): MysqlPoolConnection => {
    let wrapper = wrappers.get(raw);
    if (wrapper === undefined) {
      wrapper = timedConnection(raw, timeoutMs);
      wrappers.set(raw, wrapper);
    }
    return wrapper;
  };
  // mysql2 throws an uncaught error if the pool ends while a connection is still being opened.
  const opening = new Set<Promise<void>>();
  return {
    getConnection: (callback) => {
      let opened = (): void => undefined;
      const attempt = new Promise<void>((resolve) => {
        opened = resolve;
      });
      opening.add(attempt);
      pool.getConnection((error, raw) => {
        opening.delete(attempt);
        opened();
        // On error there is no connection to wrap, and Kysely reads none.
        callback(error, error === null ? wrap(raw) : (undefined as never));
      });
    },
    end: (callback) => {
      void Promise.all(opening).then(() => {
        pool.end(callback);
      });
    },
  };
}

function timedConnection(raw: PoolConnection, timeoutMs: number): MysqlPoolConnection {
  function query(sql: string, parameters: unknown[]): ReturnType<PoolConnection['query']>;
  function query(sql: string, parameters: unknown[], callback: (error: unknown, result: MysqlQueryResult) => void): void;
  function query(
    sql: string,
    parameters: unknown[],
    callback?: (error: unknown, result: MysqlQueryResult) => void,
  ): ReturnType<PoolConnection['query']> | undefined {
    if (callback === undefined) return raw.query({ sql, timeout: timeoutMs }, parameters);
    // A timer of our own: mysql2's per-query `timeout` option (an options object) costs about
    // 15 microseconds of CPU per query, a tenth of a key read.
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      raw.destroy();
      callback(new Error(`query timed out after ${timeoutMs} ms`), undefined as never);
    }, timeoutMs);
    raw.query(sql, parameters, (error: QueryError | null, result) => {
      if (timedOut) return;
      clearTimeout(timer);
      callback(error, result as MysqlQueryResult);
    });
    return undefined;
  }
  return { query, release: () => raw.release() };
}
