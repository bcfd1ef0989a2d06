import { execFile } from 'node:child_process';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  json(): unknown;
}

/** Runs the real CLI as an operator would, with only the environment given here. */
export function cli(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env: { ...base, ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) as unknown });
    });
  });
}
