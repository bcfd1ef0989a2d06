/**
 * What the soak runs against, each of its own: a database on the machine's MariaDB (migrated, the
 * bench catalog imported), a redis-server on a free port that can be killed and started again on
 * the same port, the service itself, and the operator CLI as an operator runs it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createConnection, type Connection } from 'mysql2/promise';
import { untilRedisAnswers } from '../bench-redis.js';
import { freePort, startServer } from '../server-process.js';
import { createBenchDatabase, SERVER_URL } from '../targets-mysql.js';

const ROOT = resolve(import.meta.dirname, '../..');
const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A database of the soak's own, and a connection beside the service's to cut its connections. */
export class SoakDatabase {
  private constructor(private readonly server: Connection, readonly name: string) {}

  get url(): string {
    return `${SERVER_URL}/${this.name}`;
  }

  /** Creates, migrates and fills the database with the catalog file, as the bench's MySQL rows do (createBenchDatabase). */
  static async open(catalogFile: string): Promise<SoakDatabase> {
    const server = await createConnection({ uri: SERVER_URL, connectTimeout: 2_000 });
    const database = new SoakDatabase(server, `pcat_soak_${process.pid}_${Date.now()}`);
    await createBenchDatabase(server, database.name, catalogFile);
    return database;
  }

  /** Kills every connection open on the database (the service's and any CLI's); how many. */
  async cutConnections(): Promise<number> {
    const [rows] = await this.server.query('select id from information_schema.processlist where db = ?', [this.name]);
    const ids = (rows as Array<{ id: number }>).map((row) => row.id);
    for (const id of ids) await this.server.query(`kill ${id}`).catch(() => undefined); // one may close on its own meanwhile
    return ids.length;
  }

  async drop(): Promise<void> {
    await this.server.query(`drop database if exists \`${this.name}\``);
    await this.server.end();
  }
}

/** A redis-server of the soak's own, without persistence: a restart brings it back empty. */
export class SoakRedis {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<SoakRedis> {
    const redis = new SoakRedis(await freePort());
    await redis.spawn();
    return redis;
  }

  /** SIGKILL, then a new server on the same port; resolves once it answers PING. */
  async restart(): Promise<void> {
    await this.stop();
    await this.spawn();
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child === null || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  private async spawn(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await untilRedisAnswers(this.url);
  }
}

/** The service's listeners. */
export interface SoakService {
  readonly pid: number;
  readonly api: string;
  readonly portal: string;
  readonly metrics: string;
  stop(): Promise<void>;
}

/**
 * The service from src/main.ts under tsx (as the bench starts it: on core 0 with two cores),
 * on MySQL + Redis with the portal and metrics on; resolves once `/readyz` answers 200.
 */
export async function startSoakService(env: Record<string, string>): Promise<SoakService> {
  const [port, portalPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const child = await startServer(resolve(ROOT, 'src/main.ts'), {
    ...env, HOST: '127.0.0.1', PORT: String(port), PORTAL_PORT: String(portalPort), METRICS_PORT: String(metricsPort),
  });
  const api = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const stopped = await Promise.race([exited.then(() => true), wait(15_000).then(() => false)]);
    if (!stopped) child.kill('SIGKILL');
  };
  for (let i = 0; ; i += 1) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}) before it was ready`);
    const ready = await fetch(`${api}/readyz`).then((r) => r.status === 200, () => false);
    if (ready) break;
    if (i > 600) {
      await stop();
      throw new Error('the service was not ready within 60 s');
    }
    await wait(100);
  }
  return { pid: child.pid!, api, portal: `http://127.0.0.1:${portalPort}`, metrics: `http://127.0.0.1:${metricsPort}/metrics`, stop };
}

export interface CliOutcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** Runs the operator CLI (src/cli.ts under tsx, as `npm run cli` does); never rejects. */
export class SoakCli {
  private readonly running = new Set<ChildProcess>();

  constructor(private readonly env: Record<string, string>) {}

  run(args: readonly string[]): Promise<CliOutcome> {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'src/cli.ts'), ...args], { cwd: ROOT, env: { ...process.env, ...this.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    return new Promise((done) => {
      const finish = (code: number | null): void => {
        this.running.delete(child);
        done({ code, stdout, stderr, ms: performance.now() - started });
      };
      child.on('error', (error) => { stderr += error.message; finish(null); });
      child.on('exit', (code) => finish(code));
    });
  }

  /** Runs a command that prints one JSON document with --json; rejects with its stderr on failure. */
  async json<T>(args: readonly string[]): Promise<T> {
    const outcome = await this.run([...args, '--json']);
    if (outcome.code !== 0) throw new Error(`cli ${args.join(' ')} exited ${outcome.code}: ${outcome.stderr.trim()}`);
    return JSON.parse(outcome.stdout) as T;
  }

  /** Kills the commands still running (at an interruption). */
  killAll(): void {
    for (const child of this.running) child.kill('SIGKILL');
  }
}
