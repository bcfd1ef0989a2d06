import { spawn } from 'node:child_process';

/**
 * Runs a command and resolves with what it printed; rejects if it exits other than 0. A command
 * still running after `killAfterMs`, or when `signal` aborts, is killed: no load process outlives its part.
 * `onOutput` sees all that was printed so far, each time more comes.
 */
export function outputOf(command: string[], options: { killAfterMs?: number; signal?: AbortSignal; onOutput?: (soFar: string) => void } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'inherit'], killSignal: 'SIGKILL', ...(options.signal === undefined ? {} : { signal: options.signal }) });
    let out = '';
    const timer = options.killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      options.onOutput?.(out);
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${command.join(' ')} ${signal === null ? `exited ${code}` : `was killed (${signal})`}`));
    });
  });
}
