import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { freePort } from './redis.js';

const run = promisify(execFile);

/** A MariaDB server of the test's own, on a data directory and a port of its own; the machine's server stays as it is. */
export interface MariadbServer {
  readonly port: number;
  /** Runs statements as root, over the server's Unix socket: a socket is secure transport, whatever the server asks of TCP. */
  admin(statements: readonly string[]): Promise<void>;
  /** Runs one query as root over the Unix socket, `?` in `sql` filled from `values`, and gives its rows: for the state the server reports. */
  query(sql: string, values?: readonly (string | number)[]): Promise<RowDataPacket[]>;
  /** SIGKILL by its PID, and its directory removed: a throwaway needs no clean shutdown. */
  close(): Promise<void>;
}

/** How many ports a start tries: one freePort found can be taken by another process before the server binds it. */
const PORT_ATTEMPTS = 5;
/** How often the start looks whether the server answers, and how many looks it makes before it gives up. */
const ANSWER_POLL_MS = 50;
const ANSWER_POLLS = 1_200;

/**
 * Installs a data directory (`mariadb-install-db --no-defaults`: the system `my.cnf` names the
 * system server's socket and pid file), starts `mariadbd` on it listening on `bind` (127.0.0.1
 * unless told) with `args` added, and resolves once the server answers root on its socket.
 * `mariadb-install-db` makes root@localhost and root@127.0.0.1 with no password.
 */
export async function startMariadbServer(options: { bind?: readonly string[]; args?: readonly string[] } = {}): Promise<MariadbServer> {
  const dir = mkdtempSync(join(tmpdir(), 'pcat-mariadb-'));
  const user = userInfo().username;
  try {
    const datadir = join(dir, 'data');
    // A starting server (the install's too) deletes every #sql* file in its tmpdir, so in a shared /tmp it deletes the
    // temporary tables of one starting beside it, which then fails ("Could not remove temporary table"): each has its own.
    const ownTmpdir = join(dir, 'tmp');
    mkdirSync(ownTmpdir);
    await run('mariadb-install-db', ['--no-defaults', `--datadir=${datadir}`, `--user=${user}`, '--auth-root-authentication-method=normal', '--skip-test-db', `--tmpdir=${ownTmpdir}`]);
    const socketPath = join(dir, 'mariadbd.sock');
    const logFile = join(dir, 'mariadbd.err');
    for (let attempt = 1; ; attempt += 1) {
      const port = await freePort();
      const child = spawn(mariadbd(), [
        '--no-defaults', `--user=${user}`, `--datadir=${datadir}`, `--socket=${socketPath}`, `--pid-file=${join(dir, 'mariadbd.pid')}`,
        `--port=${port}`, `--bind-address=${(options.bind ?? ['127.0.0.1']).join(',')}`, `--log-error=${logFile}`, `--tmpdir=${ownTmpdir}`, ...(options.args ?? []),
      ], { stdio: 'ignore' });
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      if (await answered(child, socketPath)) {
        const asRoot = async <T>(work: (connection: Connection) => Promise<T>): Promise<T> => {
          const connection = await createConnection({ socketPath, user: 'root' });
          try {
            return await work(connection);
          } finally {
            await connection.end();
          }
        };
        return {
          port,
          admin: (statements) => asRoot(async (connection) => {
            for (const statement of statements) await connection.query(statement);
          }),
          query: (sql, values = []) => asRoot(async (connection) => (await connection.query<RowDataPacket[]>(sql, [...values]))[0]),
          close: async () => {
            if (child.exitCode === null && child.signalCode === null) {
              child.kill('SIGKILL');
              await exited;
            }
            await rm(dir, { recursive: true, force: true });
          },
        };
      }
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
      if (attempt === PORT_ATTEMPTS || !/Address already in use/.test(log)) throw new Error(`mariadbd did not start on port ${port}:\n${log}`);
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Whether the server came to answer root on its socket; false once it has exited, or never answered. */
async function answered(child: ChildProcess, socketPath: string): Promise<boolean> {
  for (let poll = 0; poll < ANSWER_POLLS; poll += 1) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    try {
      const connection = await createConnection({ socketPath, user: 'root' });
      await connection.end();
      return true;
    } catch {
      await sleep(ANSWER_POLL_MS);
    }
  }
  child.kill('SIGKILL');
  return false;
}

/** The server's binary: Debian installs it in /usr/sbin, which a user's PATH often leaves out. */
function mariadbd(): string {
  const directories = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  const found = directories.map((directory) => join(directory, 'mariadbd')).find((file) => existsSync(file));
  if (found === undefined) throw new Error(`mariadbd is in none of ${directories.join(', ')}: install MariaDB`);
  return found;
}
