import { randomBytes } from 'node:crypto';
import { createConnection, type Connection } from 'mysql2/promise';

/** The MariaDB server of the machine (STACK-NOTES.md); override with TEST_MARIADB_URL. */
const SERVER_URL = process.env.TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';

export interface TestDatabase {
  /** `mysql://` URL of this suite's own database; read it inside hooks and tests only. */
  readonly url: string;
}

let warned = false;

async function connectToServer(): Promise<Connection | null> {
  try {
    return await createConnection({ uri: SERVER_URL, connectTimeout: 2_000 });
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
 * Registers hooks on the enclosing `describe`: a freshly created, uniquely named database
 * before its tests, dropped after them. Without a reachable MariaDB the tests are skipped,
 * except under CI=true, where they fail.
 */
export function useTestDatabase(): TestDatabase {
  const name = `pcat_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  let url: string | undefined;
  let server: Connection | null = null;

  before(async function () {
    server = await connectToServer();
    if (server === null) this.skip();
    await server.query(`create database \`${name}\` character set utf8mb4 collate utf8mb4_bin`);
    url = `${SERVER_URL.replace(/\/$/, '')}/${name}`;
  });
  after(async function () {
    if (server === null) return;
    await server.query(`drop database if exists \`${name}\``);
    await server.end();
  });

  return {
    get url(): string {
      if (url === undefined) throw new Error('the test database exists only inside hooks and tests');
      return url;
    },
  };
}
