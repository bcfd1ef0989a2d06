import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/*
 * `npm run test:suite`: Mocha over every `test/**\/*.test.ts`, in parallel (.mocharc.json), the
 * slowest files first. Mocha hands files to its workers in the order it is given them, and in the
 * order of the glob the slowest came late (the image, the operator messages): a worker still ran
 * one of them for minutes after the others had finished everything. Started first, they run beside
 * the rest. Arguments after `--` go to Mocha (`npm run test:suite -- -g portal`).
 */

/** The slowest files on CI (the reporter's list of the slowest files), slowest first. */
const SLOWEST_FIRST = [
  'test/cli-webhooks.test.ts',
  'test/cli.test.ts',
  'test/http/rolling-restart.test.ts',
  'test/operator-messages.test.ts',
  'test/http/public-api.test.ts',
  'test/image.test.ts',
  'test/http/change-propagation.test.ts',
  'test/http/replica-reads.test.ts',
  'test/cli-check.test.ts',
  'test/http/test-keys-instances.test.ts',
];

/** Every test file under `dir`, in name order. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return testFiles(path);
      return entry.name.endsWith('.test.ts') ? [path] : [];
    });
}

const missing = SLOWEST_FIRST.filter((file) => !existsSync(file));
if (missing.length > 0) {
  process.stderr.write(`test-suite: ${missing.join(', ')} listed as slowest in scripts/test-suite.ts but not found: update the list\n`);
  process.exit(2);
}
const files = [...SLOWEST_FIRST, ...testFiles('test').filter((file) => !SLOWEST_FIRST.includes(file))];
const mocha = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...files, ...process.argv.slice(2)], { stdio: 'inherit' });
mocha.on('close', (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128);
});
