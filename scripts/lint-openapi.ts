/**
 * Lints the OpenAPI document the service serves as partners' own linters would, with their default
 * rules: Spectral's `spectral:oas` and Redocly's `recommended`; then with Redocly and the project's
 * redocly.yaml, which adds rules of ours and changes none of recommended's. Any finding fails.
 * Two documents: the one `/openapi.json` serves on default settings (test/http/openapi.test.ts holds
 * them the same) and one of a configured deployment (an https address, a full contact, terms).
 * Both linters run offline here: no telemetry, no update check.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeOperations } from '../src/adapters/http/openapi-document.js';
import { OPERATIONS, openApiDocument } from '../src/adapters/http/operations.js';

/** One finding, whichever linter made it. */
interface Finding {
  readonly file: string;
  readonly severity: string;
  readonly rule: string;
  readonly where: string;
  readonly message: string;
}

interface Linter {
  readonly name: string;
  run(files: readonly string[]): Finding[];
}

const resolve = createRequire(import.meta.url).resolve;
const QUIET = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', NO_UPDATE_NOTIFIER: '1' };

/** Runs a linter's CLI and parses its JSON report from stdout; exits non-zero on findings, so only the report counts. */
function report(args: readonly string[], what: string): unknown {
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', env: QUIET, maxBuffer: 64 * 1024 * 1024 });
  try {
    return JSON.parse(run.stdout) as unknown;
  } catch {
    throw new Error(`${what} gave no report (exit ${String(run.status)}):\n${run.stdout}\n${run.stderr}`);
  }
}

const SPECTRAL_SEVERITY = ['error', 'warning', 'info', 'hint'];

function spectral(directory: string): Linter {
  const ruleset = join(directory, '.spectral.json');
  writeFileSync(ruleset, JSON.stringify({ extends: ['spectral:oas'] }));
  const cli = resolve('@stoplight/spectral-cli/dist/index.js');
  return {
    name: 'Spectral, spectral:oas',
    run: (files) => {
      const results = report([cli, 'lint', ...files, '--ruleset', ruleset, '--format', 'json', '--quiet'], 'Spectral') as {
        source: string; severity: number; code: string; path: string[]; message: string;
      }[];
      return results.map((r) => ({ file: r.source, severity: SPECTRAL_SEVERITY[r.severity] ?? String(r.severity), rule: r.code, where: `#/${r.path.join('/')}`, message: r.message }));
    },
  };
}

function redocly(name: string, config: string): Linter {
  const cli = resolve('@redocly/cli/bin/cli.js');
  return {
    name,
    run: (files) => files.flatMap((file) => {
      const { problems } = report([cli, 'lint', file, '--config', config, '--format', 'json'], 'Redocly CLI') as {
        problems: { ruleId: string; severity: string; message: string; location: { pointer?: string }[] }[];
      };
      return problems.map((p) => ({ file, severity: p.severity, rule: p.ruleId, where: p.location[0]?.pointer ?? '?', message: p.message }));
    }),
  };
}

const directory = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
try {
  const documents = {
    'default settings': openApiDocument,
    'a configured deployment': describeOperations(OPERATIONS, 'https://catalog.partner-api.test', {
      contact: { name: 'Catalog API Team', email: 'api-support@partner-api.test', url: 'https://partner-api.test/support' },
      termsUrl: 'https://partner-api.test/terms',
    }),
  };
  const files = Object.entries(documents).map(([label, document], i) => {
    const file = join(directory, `openapi-${i + 1}.json`);
    writeFileSync(file, JSON.stringify(document, null, 2));
    return { file, label };
  });
  const recommended = join(directory, 'redocly.yaml');
  writeFileSync(recommended, 'extends:\n  - recommended\ntelemetry: off\n');
  const linters = [
    spectral(directory),
    redocly('Redocly CLI, recommended', recommended),
    redocly('Redocly CLI, redocly.yaml (recommended and ours)', fileURLToPath(new URL('../redocly.yaml', import.meta.url))),
  ];
  const labelOf = new Map(files.map(({ file, label }) => [file, label]));
  let failed = false;
  for (const linter of linters) {
    const findings = linter.run(files.map(({ file }) => file));
    const summary = `OpenAPI document (${files.map(({ label }) => label).join('; ')}), ${linter.name}: ${findings.length} findings`;
    if (findings.length === 0) {
      process.stdout.write(`${summary}\n`);
      continue;
    }
    failed = true;
    const lines = findings.map((f) => `  ${f.severity} ${f.rule} at ${f.where} (${labelOf.get(f.file) ?? f.file}): ${f.message}`);
    process.stderr.write(`${summary}\n${lines.join('\n')}\n`);
  }
  if (failed) process.exitCode = 1;
} finally {
  rmSync(directory, { recursive: true, force: true });
}
