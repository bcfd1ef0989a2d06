import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { createConnection, type Connection } from 'mysql2/promise';
import type { Database } from '../../src/adapters/mysql/database.js';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { createMysqlDatabase } from '../../src/adapters/mysql/mysql-database.js';

/** The MariaDB server of the machine (docs/architecture.md, tests); override with TEST_MARIADB_URL. */
const SERVER_URL = process.env.TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';

/** This suite's own database, migrated; read its fields inside hooks and tests only. */
export interface TestDatabase {
  readonly url: string;
  /** A handle the helper opens and closes. */
  readonly db: Kysely<Database>;
}

let warned = false;

async function connectToServer(): Promise<Connection | null> {
  try {
    // A server that is not there refuses at once; the bound is for a busy one (a loaded machine running
    // three test files at once saw a 2 s bound pass with MariaDB up), and stays under the hooks' 20 s.
    return await createConnection({ uri: SERVER_URL, connectTimeout: 15_000 });
  } catch (error) {
    if (process.env.CI === 'true') throw new Error(`MariaDB at ${SERVER_URL} is unreachable, and CI=true forbids skipping: ${String(error)}`);
    if (!warned) {
      warned = true;
      process.stderr.write(`\n!!! MariaDB at ${SERVER_URL} is unreachable: SKIPPING every MySQL test (${(error as Error).message}) !!!\n\n`);
    }
    return null;
  }
}

/**
 * Registers hooks on the enclosing `describe`: a freshly created, uniquely named database,
 * migrated unless told otherwise, before its tests, dropped after them. Without a reachable MariaDB the tests are skipped,
 * except under CI=true, where they fail.
 */
export function useTestDatabase(options: { migrated?: boolean } = {}): TestDatabase {
  const name = `pcat_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  let opened: TestDatabase | undefined;
  let server: Connection | null = null;

  before(async function () {
    server = await connectToServer();
    if (server === null) this.skip();
    await server.query(`create database \`${name}\` character set utf8mb4 collate utf8mb4_bin`);
    const url = `${SERVER_URL.replace(/\/$/, '')}/${name}`;
    // Migrations and imports, as the operator CLI runs them: a slow DDL on a busy machine is no failure.
    opened = { url, db: createMysqlDatabase(url, { queryTimeoutMs: 60_000 }) };
    if (options.migrated ?? true) await migrateToLatest(opened.db);
  });
  after(async function () {
    await opened?.db.destroy();
    if (server === null) return;
    await server.query(`drop database if exists \`${name}\``);
    await server.end();
  });

  const current = (): TestDatabase => {
    if (opened === undefined) throw new Error('the test database exists only inside hooks and tests');
    return opened;
  };
  return {
    get url() {
      return current().url;
    },
    get db() {
      return current().db;
    },
  };
}
