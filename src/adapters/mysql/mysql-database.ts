import { Kysely, MysqlDialect, type Logger } from 'kysely';
import { createPool, type PoolOptions } from 'mysql2';
import { connect, type Socket } from 'node:net';
import { TIMEOUTS } from '../timeouts.js';
import type { Database } from './database.js';
import { boundedPool, type CatchUp, type PoolUse } from './bounded-pool.js';

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
  /** TLS to the server; none: plain TCP. */
  readonly tls?: MysqlTls | undefined;
  /** A replica's pool: what each connection must have applied before it is lent. */
  readonly catchUp?: CatchUp;
}

/**
 * TLS that verifies the server's certificate against `ca`, a PEM of the authorities to trust (the
 * system's without it), and against the host the URL names, be it a name or an address.
 */
export interface MysqlTls {
  readonly ca?: Buffer;
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
    ...(options.tls === undefined ? {} : verifiedTls(options.tls)),
  });
  const bounded = boundedPool(pool, {
    connectionLimit,
    queueLimit: options.queueLimit ?? SERVING_POOL.queueLimit,
    queryTimeoutMs: options.queryTimeoutMs ?? TIMEOUTS.servingDatabase.queryTimeoutMs,
    // JSON_ARRAYAGG is built on GROUP_CONCAT in MariaDB and would be cut at the 1 MiB default.
    sessionSetup: ['set session group_concat_max_len = 67108864'],
    ...(options.catchUp === undefined ? {} : { catchUp: options.catchUp }),
  });
  const dialect = new MysqlDialect({ pool: bounded });
  return { db: new Kysely<Database>(options.onStatement === undefined ? { dialect } : { dialect, log: options.onStatement }), poolUse: () => bounded.use() };
}

/** What mysql2 is handed to reach a connection's server: its host and port, from the URL. */
interface StreamOptions {
  readonly config: { readonly host: string; readonly port: number };
}

/**
 * mysql2's TLS with `rejectUnauthorized` and `verifyIdentity`, on sockets opened here. mysql2 checks a
 * host name against the certificate itself, but leaves an address to Node, which takes the host to
 * check from the socket, and a socket opened on an address records none: Node then checks the name
 * "localhost" instead. Each socket records its host, so an address is checked as a name is.
 */
function verifiedTls(tls: MysqlTls): Pick<PoolOptions, 'ssl' | 'stream'> {
  return {
    ssl: { ...(tls.ca === undefined ? {} : { ca: tls.ca }), rejectUnauthorized: true, verifyIdentity: true },
    stream: ({ config }: StreamOptions): Socket => {
      const socket = connect(config.port, config.host);
      // What mysql2 does for the sockets it opens itself.
      socket.setNoDelay(true);
      socket.setKeepAlive(true);
      return Object.assign(socket, { _host: config.host });
    },
  };
}
