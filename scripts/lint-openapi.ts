/**
 * Lints the OpenAPI document the service serves with Redocly CLI: its `recommended` rules and ours (redocly.yaml).
 * Any error or warning fails. Redocly runs offline here: no telemetry, no update check.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '../src/adapters/http/operations.js';

interface Problem {
  readonly ruleId: string;
  readonly severity: string;
  readonly message: string;
  readonly location: readonly { readonly pointer?: string }[];
}

interface Report {
  readonly totals: { readonly errors: number; readonly warnings: number };
  readonly problems: readonly Problem[];
}

const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
const config = fileURLToPath(new URL('../redocly.yaml', import.meta.url));

function lint(file: string): Report {
  const run = spawnSync(process.execPath, [cli, 'lint', file, '--config', config, '--format', 'json'], {
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' },
  });
  try {
    return JSON.parse(run.stdout) as Report;
  } catch {
    throw new Error(`Redocly CLI gave no report (exit ${String(run.status)}):\n${run.stderr}`);
  }
}

const directory = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
try {
  const file = join(directory, 'openapi.json');
  writeFileSync(file, JSON.stringify(openApiDocument, null, 2));
  const { totals, problems } = lint(file);
  const summary = `OpenAPI document, Redocly CLI with redocly.yaml: ${totals.errors} errors, ${totals.warnings} warnings`;
  if (totals.errors + totals.warnings === 0) {
    process.stdout.write(`${summary}\n`);
  } else {
    const lines = problems.map((p) => `  ${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`);
    process.stderr.write(`${summary}\n${lines.join('\n')}\n`);
    process.exitCode = 1;
  }
} finally {
  rmSync(directory, { recursive: true, force: true });
}
