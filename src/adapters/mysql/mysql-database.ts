import { CompiledQuery, Kysely, MysqlDialect } from 'kysely';
import { createPool } from 'mysql2';
import type { Database } from './database.js';
import { withQueryTimeout } from './timed-pool.js';

export interface MysqlDatabaseOptions {
  /** How long opening a connection may take; a lost database fails fast instead of hanging. */
  readonly connectTimeoutMs?: number;
  /** How long one statement may run, client side; long for imports, short for serving requests. */
  readonly queryTimeoutMs?: number;
  readonly connectionLimit?: number;
}

export const SERVING_TIMEOUTS = { connectTimeoutMs: 2_000, queryTimeoutMs: 3_000 } as const;

/** A Kysely handle on the database named by a `mysql://user:pass@host:port/db` URL. */
export function createMysqlDatabase(url: string, options: MysqlDatabaseOptions = {}): Kysely<Database> {
  const pool = createPool({
    uri: url,
    connectTimeout: options.connectTimeoutMs ?? SERVING_TIMEOUTS.connectTimeoutMs,
    connectionLimit: options.connectionLimit ?? 10,
    // Dates are stored and read as UTC whatever the server's or the process's zone.
    timezone: 'Z',
    charset: 'utf8mb4_bin',
    enableKeepAlive: true,
  });
  return new Kysely<Database>({
    dialect: new MysqlDialect({
      pool: withQueryTimeout(pool, options.queryTimeoutMs ?? SERVING_TIMEOUTS.queryTimeoutMs),
      onCreateConnection: async (connection) => {
        // JSON_ARRAYAGG is built on GROUP_CONCAT in MariaDB and would be cut at the 1 MiB default.
        await connection.executeQuery(CompiledQuery.raw('set session group_concat_max_len = 67108864'));
      },
    }),
  });
}
