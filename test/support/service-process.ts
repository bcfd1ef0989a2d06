import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { ROOT, scriptCommand, type ServiceScript } from './script-command.js';

/** The real service as a user runs it (`npm start`'s command line, or `npm run start:prod`'s), in a child process. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the text once stdout matches, or rejects on exit or timeout. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited(): Promise<number | null>;
  kill(): void;
}

/**
 * In `cwd`, the project's directory unless told: a copy of it is where production's install is tried.
 * The compiled start unless told: it is what production runs, and the build is made once per run where
 * tsx would compile the sources again at every start (twice the CPU of a start). The demo's `npm start`
 * (tsx) is started by the tests that are about it (test/entry-points.test.ts, one-process).
 */
export function startService(env: Record<string, string>, script: ServiceScript = 'start:prod', cwd = ROOT): ServiceProcess {
  const command = scriptCommand(script);
  const child = spawn(command.file, command.args, {
    cwd,
    env: { PATH: command.path, HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', PORTAL_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { err += c.toString(); });
  const exit = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited: () => exit,
    kill: () => { if (child.exitCode === null) child.kill('SIGKILL'); },
    waitFor: async (pattern, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(out);
        if (match) return match;
        if (child.exitCode !== null) throw new Error(`service exited ${child.exitCode}: ${err}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; stdout: ${out}; stderr: ${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}
