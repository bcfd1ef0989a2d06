import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** The real service as a user runs it (`src/main.ts` under tsx), in a child process. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the text once stdout matches, or rejects on exit or timeout. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited(): Promise<number | null>;
  kill(): void;
}

export function startService(env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', PORTAL_PORT: '0', LOG_LEVEL: 'info', ...env },
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
