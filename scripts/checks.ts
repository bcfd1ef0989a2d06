import { spawn } from 'node:child_process';

/*
 * `npm test`'s checks and build, on both cores: ESLint (type-checked, the longest) in one lane; the
 * type-check, the architecture rule, the OpenAPI lint and the build one after the other in the
 * other. Each is a single-threaded process, and one after the other they left a core idle for
 * as long as they all took. Each command's output is printed whole when it ends, under its name;
 * the first failure is named, and the exit code is 1 if any failed.
 */

const LANES: readonly (readonly string[])[] = [
  ['lint'],
  ['typecheck', 'arch', 'lint:openapi', ...(process.argv.includes('--no-build') ? [] : ['build'])],
];

interface Outcome {
  readonly script: string;
  readonly code: number;
  readonly seconds: number;
}

function runScript(script: string): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '-s', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('close', (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      const text = Buffer.concat(output).toString('utf8');
      process.stdout.write(`checks: ${script} (${seconds.toFixed(1)} s)${code === 0 ? '' : `: failed (${signal ?? `exit ${code}`})`}\n${text}${text === '' || text.endsWith('\n') ? '' : '\n'}`);
      resolve({ script, code: code ?? 1, seconds });
    });
  });
}

/** A lane's scripts one after the other, stopping at the first that fails. */
async function runLane(scripts: readonly string[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const script of scripts) {
    const outcome = await runScript(script);
    outcomes.push(outcome);
    if (outcome.code !== 0) break;
  }
  return outcomes;
}

const outcomes = (await Promise.all(LANES.map(runLane))).flat();
const failed = outcomes.filter((outcome) => outcome.code !== 0);
if (failed.length > 0) {
  process.stderr.write(`checks: failed: ${failed.map((outcome) => outcome.script).join(', ')}\n`);
  process.exit(1);
}
