import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The scripts that start the service and the CLI, unbuilt (tsx) and compiled (dist/). */
export type ServiceScript = 'start' | 'start:prod';
export type CliScript = 'cli' | 'cli:prod';

export interface ScriptCommand {
  readonly file: string;
  readonly args: readonly string[];
  /** PATH as `npm run` would have it: the project's bins first, and the node running the tests before the machine's. */
  readonly path: string;
}

/**
 * The command line of a package.json script, to start without npm and a shell in between, so the
 * tests run what an operator runs. A leading `exec` (the shell gives way to the command, so npm's
 * signals reach it) is the shell's, not the command's. A script that needs more of a shell is
 * refused rather than guessed at.
 */
export function scriptCommand(name: string): ScriptCommand {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const line = scripts[name]?.replace(/^exec /, '');
  if (line === undefined) throw new Error(`package.json has no script "${name}"`);
  if (!/^[\w@./:=-]+( [\w@./:=-]+)*$/.test(line)) throw new Error(`script "${name}" is more than one plain command: ${line}`);
  const [program, ...args] = line.split(' ') as [string, ...string[]];
  if (args.some((arg) => arg.startsWith('dist/'))) ensureBuilt();
  const bin = join(ROOT, 'node_modules', '.bin');
  const file = program === 'node' ? process.execPath : join(bin, program);
  return { file, args, path: [bin, dirname(process.execPath), process.env.PATH ?? ''].join(delimiter) };
}

let built = false;

/** `npm test` builds before mocha; a test file run alone gets dist/ rebuilt here when src/ is newer. */
export function ensureBuilt(): void {
  if (built) return;
  const stale = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    // A declaration file (.d.ts) compiles to nothing: it would count as never built.
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .some((file) => {
      const output = join(ROOT, 'dist', file.replace(/\.ts$/, '.js'));
      try {
        return statSync(output).mtimeMs < statSync(join(ROOT, 'src', file)).mtimeMs;
      } catch {
        return true;
      }
    });
  if (stale) execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
  built = true;
}
