import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { SINGLE_THREADED_GC } from '../src/adapters/config/one-core.js';

export const cores = Number(spawnSync('nproc').stdout.toString().trim()) || 1;
/** The server runs on core 0 and the load on core 1, when there are two cores and taskset. */
export const pinned = cores >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function waitUntilUp(url: string): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`server did not come up at ${url}`);
}

/**
 * Starts a server script under tsx on core 0. With `taskset`, the child is taskset itself until it
 * execs node: same pid, so the pid is the server's; and node runs with `--single-threaded-gc`, as
 * docs/operations.md tells a deployment on one core to (the collector's helper threads would take
 * turns with the event loop on it), every server alike: the references, the limits and the service.
 * The service's metrics are on, as in production, on a free port of their own unless `env` says
 * otherwise (METRICS_PORT=0 turns them off); the partner portal, which no bench drives, is off, so
 * its fixed default port is never contended.
 */
export async function startServer(script: string, env: Record<string, string>, nodeArgs: readonly string[] = []): Promise<ChildProcess> {
  const node = [process.execPath, ...(pinned ? [SINGLE_THREADED_GC] : []), ...nodeArgs, '--import', 'tsx', script];
  const [command, ...args] = pinned ? ['taskset', '-c', '0', ...node] : node;
  const metricsPort = env.METRICS_PORT ?? String(await freePort());
  return spawn(command!, args, { env: { ...process.env, METRICS_PORT: metricsPort, PORTAL_PORT: '0', ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** A command for the load side, on core 1 when pinned. */
export function onLoadCore(command: string[]): string[] {
  return pinned ? ['taskset', '-c', '1', ...command] : command;
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  } catch {
    return 0; // the process has gone
  }
}

/**
 * The CPU time a process has used (user and system), in microseconds, from /proc; 0 when unreadable.
 * Read around a load run it gives CPU per answer, which a busy shared machine disturbs far less
 * than throughput.
 */
export function cpuMicros(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which may hold spaces, start after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime and stime (fields 14 and 15)
    return (ticks * 1e6) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim()) || 100;

export const rssMb = (pid: number): number => Math.round(statusKb(pid, 'VmRSS') / 1024);
export const peakRssMb = (pid: number): number => Math.round(statusKb(pid, 'VmHWM') / 1024);

export interface ServerOptions {
  /** Options for node before the script, e.g. `--cpu-prof`. */
  readonly nodeArgs?: readonly string[];
  /**
   * Stop with SIGTERM and wait for the process to exit (the service's own shutdown), so that what
   * node writes at exit (a `--cpu-prof` profile) is written; else SIGKILL.
   */
  readonly stopGracefully?: boolean;
}

/**
 * Starts a server script on a free port, waits until it answers `/healthz`, gives `use` its base
 * URL and pid, and kills it when `use` is done.
 */
export async function withServer<T>(script: string, env: Record<string, string>, use: (base: string, pid: number) => Promise<T>, options: ServerOptions = {}): Promise<T> {
  const port = await freePort();
  const child = await startServer(script, { ...env, PORT: String(port) }, options.nodeArgs);
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitUntilUp(`${base}/healthz`);
    return await use(base, child.pid!);
  } finally {
    if (options.stopGracefully === true && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
    }
    child.kill('SIGKILL');
  }
}
