import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { createMysqlDatabase, type MysqlTls } from '../../src/adapters/mysql/mysql-database.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';
import { importCatalog } from './import.js';
import { startMariadbServer, type MariadbServer } from './mariadb-server.js';

/** A MariaDB primary and one or more replicas of it on GTIDs, each of the test's own, on loopback: for tests of reads sent to a replica. */
export interface ReplicatedMariadb {
  readonly primary: MariadbServer;
  /** The first replica. */
  readonly replica: MariadbServer;
  /** Every replica, in the order started (`replicas` of them). */
  readonly replicas: readonly MariadbServer[];
  /** A URL on the primary, as the service's user: it may write there. */
  primaryUrl(database: string): string;
  /** A URL on a replica (the first unless told), as the service's user: not an administrator, so the replica's read_only refuses its writes (errno 1290), as in production. */
  replicaUrl(database: string, index?: number): string;
  /** The primary's `@@gtid_binlog_pos` now: where the replica has to be to have seen every commit made so far. */
  primaryPosition(): Promise<string>;
  /** Resolves once every replica has applied all that the primary has committed by now; throws, with the replica's threads' states, if it does not within a generous time. */
  caughtUp(): Promise<void>;
  /** Stops a replica's (the first unless told) SQL thread: it still receives the primary's commits but applies none, a lag that lasts until resumeApplying. */
  stopApplying(index?: number): Promise<void>;
  /** Starts a replica's SQL thread again: it applies what it received meanwhile. */
  resumeApplying(index?: number): Promise<void>;
  /** Closes every server, as MariadbServer.close does. */
  close(): Promise<void>;
}

/** The service's user, the same on every server since it is made on the primary and replicated. */
const SERVICE_USER = 'pcat';
/** The user the replica reads the primary's binary log as: REPLICATION SLAVE and nothing else, as in production. */
const REPLICATION_USER = 'pcat_repl';
/** Binary logs in row format on both, as a production pair runs: the replica applies the primary's rows rather than running its statements again. */
const BINLOG_ARGS = ['--log-bin=mysql-bin', '--binlog-format=ROW'];
/** How long caughtUp waits: generous, for a loaded machine running three test files at once; a replica that is well gets there in milliseconds. */
const CATCH_UP_TIMEOUT_S = 30;
/** How often the start looks whether both replica threads run, and how many looks it makes: a login refused shows in a look, not after CATCH_UP_TIMEOUT_S. */
const THREADS_POLL_MS = 20;
const THREADS_POLLS = 1_500;

/**
 * Starts a primary and `replicas` replicas (1 unless told) together (each start takes seconds),
 * makes on the primary the replication user, `databases` (utf8mb4, binary collation, as migrations
 * expect) and the service's user with all privileges on them, points each replica at the primary by
 * GTID, and resolves once every replica runs and has applied all of that, so the service's user can
 * log in to any at once. `tlsArgs` go to every server; the replicas then read the primary over TLS,
 * which a primary that takes TLS only requires. `bind`: the addresses all listen on (127.0.0.1
 * unless told); the replicas read the primary at 127.0.0.1.
 */
export async function startReplicatedMariadb(options: { databases: readonly string[]; tlsArgs?: readonly string[]; bind?: readonly string[]; replicas?: number }): Promise<ReplicatedMariadb> {
  const tlsArgs = options.tlsArgs ?? [];
  const bind = options.bind ?? ['127.0.0.1'];
  const replicaCount = options.replicas ?? 1;
  const starts = await Promise.allSettled([
    startMariadbServer({ bind, args: [...BINLOG_ARGS, '--server-id=1', ...tlsArgs] }),
    ...Array.from({ length: replicaCount }, (_, index) => startMariadbServer({ bind, args: [...BINLOG_ARGS, `--server-id=${index + 2}`, '--read-only=1', ...tlsArgs] })),
  ]);
  const failed = starts.find((start): start is PromiseRejectedResult => start.status === 'rejected');
  if (failed !== undefined) {
    // The ones that started are closed, so a failed start leaves no server behind.
    await Promise.all(starts.flatMap((start) => (start.status === 'fulfilled' ? [start.value.close()] : [])));
    throw failed.reason;
  }
  const [primary, ...replicas] = starts.map((start) => (start as PromiseFulfilledResult<MariadbServer>).value) as [MariadbServer, ...MariadbServer[]];
  const servicePassword = password();
  const urlOf = (server: MariadbServer, database: string): string => `mysql://${SERVICE_USER}:${servicePassword}@127.0.0.1:${server.port}/${database}`;
  const primaryPosition = async (): Promise<string> => String((await primary.query('select @@gtid_binlog_pos as position'))[0]!.position);
  const replicaAt = (index: number): MariadbServer => {
    const replica = replicas[index];
    if (replica === undefined) throw new Error(`there is no replica ${index}: ${replicas.length} started`);
    return replica;
  };
  const replicated: ReplicatedMariadb = {
    primary,
    replica: replicas[0]!,
    replicas,
    primaryUrl: (database) => urlOf(primary, database),
    replicaUrl: (database, index = 0) => urlOf(replicaAt(index), database),
    primaryPosition,
    caughtUp: async () => {
      const position = await primaryPosition();
      for (const replica of replicas) {
        const [row] = await replica.query(`select master_gtid_wait(?, ${CATCH_UP_TIMEOUT_S}) as reached`, [position]);
        if (Number(row!.reached) === 0) continue;
        const [applied] = await replica.query('select @@gtid_slave_pos as position');
        throw new Error(`the replica did not reach the primary's ${position} in ${CATCH_UP_TIMEOUT_S} s, but applied up to ${String(applied!.position)}: ${await threadsOf(replica)}`);
      }
    },
    stopApplying: (index = 0) => replicaAt(index).admin(['stop slave sql_thread']),
    resumeApplying: (index = 0) => replicaAt(index).admin(['start slave sql_thread']),
    close: async () => {
      await Promise.all([primary, ...replicas].map((server) => server.close()));
    },
  };
  try {
    const replicationPassword = password();
    await primary.admin([
      `create user '${REPLICATION_USER}'@'%' identified by '${replicationPassword}'`,
      `grant replication slave on *.* to '${REPLICATION_USER}'@'%'`,
      ...options.databases.map((database) => `create database \`${database}\` character set utf8mb4 collate utf8mb4_bin`),
      `create user '${SERVICE_USER}'@'%' identified by '${servicePassword}'`,
      ...options.databases.map((database) => `grant all privileges on \`${database}\`.* to '${SERVICE_USER}'@'%'`),
    ]);
    for (const replica of replicas) {
      await replica.admin([
        `change master to master_host='127.0.0.1', master_port=${primary.port}, master_user='${REPLICATION_USER}', master_password='${replicationPassword}', ` +
          `master_ssl=${tlsArgs.length > 0 ? 1 : 0}, master_use_gtid=slave_pos`,
        'start slave',
      ]);
      await bothThreadsRun(replica);
    }
    await replicated.caughtUp();
    return replicated;
  } catch (error) {
    await replicated.close();
    throw error;
  }
}

/** Migrates `database` on the primary and imports the fixture catalog there (over TLS when given), and resolves once every replica has it. */
export async function seedFixtureCatalog(pair: ReplicatedMariadb, database: string, tls?: MysqlTls): Promise<void> {
  const primary = createMysqlDatabase(pair.primaryUrl(database), { queryTimeoutMs: 60_000, tls });
  try {
    await migrateToLatest(primary);
    await importCatalog(primary, fixtureCatalog());
  } finally {
    await primary.destroy();
  }
  await pair.caughtUp();
}

/** A password of its own for each run: a test that looks for a leaked password then finds only this run's. */
function password(): string {
  return `Pw-${randomBytes(8).toString('hex')}`;
}

/**
 * Resolves once the replica's I/O thread is connected to the primary and its SQL thread runs; throws at the first
 * error either reports (the I/O thread keeps retrying a refused login, so waiting longer would not help).
 */
async function bothThreadsRun(replica: MariadbServer): Promise<void> {
  for (let poll = 0; poll < THREADS_POLLS; poll += 1) {
    const [status] = await replica.query('show slave status');
    if (status === undefined) throw new Error('the replica has no primary configured');
    if (Number(status.Last_IO_Errno) !== 0 || Number(status.Last_SQL_Errno) !== 0) throw new Error(`the replica does not replicate: ${describeThreads(status)}`);
    if (status.Slave_IO_Running === 'Yes' && status.Slave_SQL_Running === 'Yes') return;
    await sleep(THREADS_POLL_MS);
  }
  throw new Error(`the replica's threads did not come to run: ${await threadsOf(replica)}`);
}

/** The replica's threads, as SHOW SLAVE STATUS tells them, for a message that says why it lags. */
async function threadsOf(replica: MariadbServer): Promise<string> {
  const [status] = await replica.query('show slave status');
  return status === undefined ? 'no primary configured' : describeThreads(status);
}

function describeThreads(status: Record<string, unknown>): string {
  const error = (errno: unknown, message: unknown): string => (Number(errno) === 0 ? '' : ` (${String(errno)}: ${String(message)})`);
  return `I/O thread ${String(status.Slave_IO_Running)}${error(status.Last_IO_Errno, status.Last_IO_Error)}, ` +
    `SQL thread ${String(status.Slave_SQL_Running)}${error(status.Last_SQL_Errno, status.Last_SQL_Error)}, received up to ${String(status.Gtid_IO_Pos)}`;
}
