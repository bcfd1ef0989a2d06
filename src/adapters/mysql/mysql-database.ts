import { Kysely, MysqlDialect, type Logger } from 'kysely';
import { createPool } from 'mysql2';
import { TIMEOUTS } from '../timeouts.js';
import type { Database } from './database.js';
import { boundedPool, type PoolUse } from './bounded-pool.js';

export interface MysqlDatabaseOptions {
  /** How long opening a connection may take; a lost database fails fast instead of hanging. */
  readonly connectTimeoutMs?: number;
  /**
   * How long a statement may take to be answered, client side, counting the wait for a
   * connection when it is the first on that connection; long for imports, short for serving.
   */
  readonly queryTimeoutMs?: number;
  readonly connectionLimit?: number;
  /** Callers that may wait for a connection; one more fails at once. */
  readonly queueLimit?: number;
  /** Told of every statement as it is answered, `commit` included (the bench times an import's commit by it). */
  readonly onStatement?: Logger;
}

/** At 1 ms a statement, 500 waiters drain in a twentieth of the deadline; more means the database is far behind. */
export const SERVING_POOL = { connectionLimit: 10, queueLimit: 500 } as const;

/** A Kysely handle on the database named by a `mysql://user:pass@host:port/db` URL. */
export function createMysqlDatabase(url: string, options: MysqlDatabaseOptions = {}): Kysely<Database> {
  return openMeasuredMysqlDatabase(url, options).db;
}

/** The same handle, with what its pool is doing now, for a serving instance's metrics. */
export function openMeasuredMysqlDatabase(url: string, options: MysqlDatabaseOptions = {}): { readonly db: Kysely<Database>; readonly poolUse: () => PoolUse } {
  const connectionLimit = options.connectionLimit ?? SERVING_POOL.connectionLimit;
  const pool = createPool({
    uri: url,
    connectTimeout: options.connectTimeoutMs ?? TIMEOUTS.servingDatabase.connectTimeoutMs,
    connectionLimit,
    // Dates are stored and read as UTC whatever the server's or the process's zone.
    timezone: 'Z',
    charset: 'utf8mb4_bin',
    enableKeepAlive: true,
  });
  const bounded = boundedPool(pool, {
    connectionLimit,
    queueLimit: options.queueLimit ?? SERVING_POOL.queueLimit,
    queryTimeoutMs: options.queryTimeoutMs ?? TIMEOUTS.servingDatabase.queryTimeoutMs,
    // JSON_ARRAYAGG is built on GROUP_CONCAT in MariaDB and would be cut at the 1 MiB default.
    sessionSetup: ['set session group_concat_max_len = 67108864'],
  });
  const dialect = new MysqlDialect({ pool: bounded });
  return { db: new Kysely<Database>(options.onStatement === undefined ? { dialect } : { dialect, log: options.onStatement }), poolUse: () => bounded.use() };
}
