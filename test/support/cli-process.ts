import { execFile } from 'node:child_process';
import { ROOT, scriptCommand, type CliScript } from './script-command.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  json(): unknown;
}

/**
 * Runs the real CLI as an operator would, with only the environment given here: the command line of
 * `npm run cli:prod` (compiled, from dist/: the build is made once per run, where tsx would compile the
 * sources again at every run), or of `npm run cli` (tsx) when told, in the project's directory unless told.
 */
export function cli(args: readonly string[], env: Record<string, string> = {}, script: CliScript = 'cli:prod', cwd = ROOT): Promise<CliRun> {
  const command = scriptCommand(script);
  const base = { PATH: command.path, HOME: process.env.HOME ?? '' };
  return new Promise((resolve) => {
    execFile(command.file, [...command.args, ...args], { cwd, env: { ...base, ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) as unknown });
    });
  });
}
