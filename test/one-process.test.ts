import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { fixtureDocument } from './fixtures/catalog-fixture.js';
import { useTestDatabase } from './support/mariadb.js';
import { ROOT, scriptCommand, type CliScript, type ServiceScript } from './support/script-command.js';

/** Started as its own process group, so whatever it starts can be found after it is gone. */
function startScript(script: ServiceScript | CliScript, args: readonly string[], env: Record<string, string>): ChildProcess {
  const command = scriptCommand(script);
  return spawn(command.file, [...command.args, ...args], {
    cwd: ROOT,
    env: { PATH: command.path, HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
}

/** Any process left in the group, an orphan included. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGKILL to the command, then until its process group is empty. Under tsx the command has esbuild's
 * service as a child, which ends on its own once its parent's pipe closes; a worker would not.
 */
async function killCommand(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
  await until('every process of the command to end', () => Promise.resolve(groupAlive(child.pid!) ? undefined : true), 10_000);
}

async function until<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 30_000, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

// What an operator sees running is the process doing the work: SIGKILL to it leaves nothing behind.
describe('one process per command', function () {
  this.timeout(60_000);
  const started: ChildProcess[] = [];
  const start = (script: ServiceScript | CliScript, args: readonly string[], env: Record<string, string>): ChildProcess => {
    const child = startScript(script, args, env);
    started.push(child);
    return child;
  };
  afterEach(function () {
    for (const child of started.splice(0)) {
      if (child.pid !== undefined && groupAlive(child.pid)) process.kill(-child.pid, 'SIGKILL');
    }
  });

  const SERVER_ENV = { HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', PORTAL_PORT: '0' };
  const listening = async (server: ChildProcess): Promise<() => string> => {
    let out = '';
    server.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
    await until('the server to listen', () => Promise.resolve(out.includes('"msg":"listening"') ? true : undefined));
    return () => out;
  };

  for (const script of ['start', 'start:prod'] satisfies ServiceScript[]) {
    it(`npm run ${script}: SIGKILL to the server leaves no process`, async function () {
      const server = start(script, [], SERVER_ENV);
      await listening(server);
      await killCommand(server);
    });
  }

  it('npm start itself: SIGTERM to npm reaches the server, which stops gracefully', async function () {
    // npm passes SIGTERM to its child; the script's `exec` makes that child the server, not a shell.
    const command = scriptCommand('start');
    const npm = spawn('npm', ['start'], { cwd: ROOT, env: { PATH: command.path, HOME: process.env.HOME ?? '', ...SERVER_ENV }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    started.push(npm);
    const out = await listening(npm);
    const exited = once(npm, 'exit');
    npm.kill('SIGTERM');
    await exited;
    await until('every process of npm start to end', () => Promise.resolve(groupAlive(npm.pid!) ? undefined : true), 10_000);
    expect(out()).to.include('"msg":"stopped"');
  });

  describe('on MySQL', function () {
    let dir: string;
    let catalog: string;
    before(async function () {
      dir = await mkdtemp(join(tmpdir(), 'pcat-one-process-'));
      catalog = join(dir, 'large.json');
      // Large enough that the import is still writing when it is killed: seconds of work.
      const template = (fixtureDocument() as { partners: { products: Record<string, unknown>[] }[] }).partners[0]!.products[2]!;
      const products = Array.from({ length: 20_000 }, (_, i) => ({ ...template, sku: `LARGE-${i}`, title: `Large ${i}` }));
      await writeFile(catalog, JSON.stringify({ format: 'partner-catalog/v1', partners: [{ id: 'large', name: 'Large', products }] }));
    });
    after(async function () {
      await rm(dir, { recursive: true, force: true });
    });

    for (const script of ['cli', 'cli:prod'] satisfies CliScript[]) describe(`npm run ${script} -- import`, function () {
      const testDb = useTestDatabase();

      it('SIGKILL to it mid-import leaves no process, and nothing of the import lands', async function () {
        const importing = start(script, ['import', catalog], { DATABASE_URL: testDb.url });
        // The import's transaction open in this database: the work is under way. InnoDB refreshes
        // innodb_trx only once 100 ms pass without a read of it, so a faster poll would never see it.
        const connections = await until('the import to start writing', async () => {
          const { rows } = await sql<{ id: number | string }>`select p.id from information_schema.innodb_trx t join information_schema.processlist p on p.id = t.trx_mysql_thread_id where p.db = database() and p.id <> connection_id()`.execute(testDb.db);
          return rows.length > 0 ? rows.map((r) => Number(r.id)) : undefined;
        }, 30_000, 200);
        await killCommand(importing);
        // Once the server has dropped the killed connections, their transaction is rolled back.
        await until('the import connections to close', async () => {
          const { rows } = await sql<{ n: number | string }>`select count(*) as n from information_schema.processlist where id in (${sql.join(connections)})`.execute(testDb.db);
          return Number(rows[0]!.n) === 0 ? true : undefined;
        });
        const { rows } = await sql<{ n: number | string }>`select count(*) as n from products`.execute(testDb.db);
        expect(Number(rows[0]!.n)).to.equal(0);
      });
    });
  });
});
