import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NO_REDIS_HINT } from '../src/adapters/cli/run-command.js';
import { fixtureDocument } from './fixtures/catalog-fixture.js';
import { useTestDatabase } from './support/mariadb.js';
import { ROOT, scriptCommand } from './support/script-command.js';

/** More than one batch of 500 products, so some line shows a batch written and the next one still open. */
const PRODUCTS = 1_200;
/** A line at every step of the work: the tests wait for the command to end, never for time. */
const EVERY_STEP = { PROGRESS_INTERVAL_MS: '0' };

/** One partner with PRODUCTS products, each a copy of a fixture product under its own SKU, video ref and page. */
function largeCatalog(): string {
  const document = fixtureDocument() as { partners: { id: string; products: Record<string, unknown>[] }[] };
  const globex = document.partners[1]!;
  const model = JSON.stringify(globex.products[0]);
  globex.products = Array.from({ length: PRODUCTS }, (_, i) => JSON.parse(model
    .replaceAll('"SHARED-1"', `"P-${i}"`).replaceAll('globex-demo', `demo-${i}`).replaceAll('https://globex.example/shared', `https://globex.example/p/${i}`)) as Record<string, unknown>);
  document.partners = [globex];
  return JSON.stringify(document);
}

const count = (text: string): number => Number(text.replaceAll(',', ''));

/** `import` lines as a log shows them: how far in the file, then the counts. */
const IMPORT_LINE = /^import: [0-9.,]+ of [0-9.,]+ (?:bytes|KB|MB) \((\d+)%\)(?:, about \d+ (?:s|min|h) left)?; ([0-9,]+) products read, ([0-9,]+) written(?:; [0-9,]+ products\/s)?$/;
const IMPORT_FINISHING = /^import: the file is read, finishing \(deletions, keys, commit\); ([0-9,]+) products read, ([0-9,]+) written$/;
const IMPORT_DONE = /^import: done in [0-9.]+ s: 1,200 products read, 1,200 written, from a file of [0-9.,]+ (?:bytes|KB|MB)$/;
const CHECK_VALIDATING = /^check: validating: [0-9.,]+ of [0-9.,]+ (?:bytes|KB|MB) \(\d+%\)(?:, about \d+ (?:s|min|h) left)?; ([0-9,]+) products read, ([0-9,]+) valid(?:; [0-9,]+ products\/s)?$/;
const CHECK_REPORTING = /^check: reporting: [0-9.,]+ of [0-9.,]+ (?:bytes|KB|MB) \(\d+%\)(?:, about \d+ (?:s|min|h) left)?; ([0-9,]+) of 1,200 products checked(?:; [0-9,]+ products\/s)?$/;
const CHECK_DONE = /^check: done in [0-9.]+ s: 1,200 products validated, 1,200 checked, from a file of [0-9.,]+ (?:bytes|KB|MB)$/;
const CHECK_CHECKING = /^check: checking: [0-9.,]+ of [0-9.,]+ (?:bytes|KB|MB) \(\d+%\)(?:, about \d+ (?:s|min|h) left)?; ([0-9,]+) products read, ([0-9,]+) valid(?:; [0-9,]+ products\/s)?$/;
const CHECK_SUMMARY_DONE = /^check: done in [0-9.]+ s: 1,200 products checked, from a file of [0-9.,]+ (?:bytes|KB|MB)$/;

/** The numbers a kind of line carries, in order, each line's at most the next's. */
function climbing(lines: readonly string[], pattern: RegExp): number[][] {
  const figures = lines.flatMap((line) => {
    const match = pattern.exec(line);
    return match === null ? [] : [match.slice(1).map(count)];
  });
  for (let i = 1; i < figures.length; i++) {
    figures[i]!.forEach((n, k) => expect(n, lines.join('\n')).to.be.at.least(figures[i - 1]![k]!));
  }
  return figures;
}

interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  json(): unknown;
}

/** The CLI as an operator runs it, stderr and stdout pipes read whole, whatever their size (a check report runs to megabytes). */
async function runCli(args: readonly string[], env: Record<string, string>): Promise<CliRun> {
  const command = scriptCommand('cli:prod');
  const child = spawn(command.file, [...command.args, ...args], { cwd: ROOT, env: { PATH: command.path, HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = await once(child, 'exit') as [number | null];
  return { code, stdout, stderr, json: () => JSON.parse(stdout) as unknown };
}

/**
 * The CLI in a pseudo-terminal, as a person at a terminal runs it: util-linux's `script` gives the
 * command a terminal for stderr, while stdout goes to a file, as `> out.json` would. Resolves with
 * what the terminal showed and what the file holds.
 */
async function inTerminal(args: readonly string[], env: Record<string, string>, dir: string): Promise<{ code: number | null; screen: string; stdout: string }> {
  const command = scriptCommand('cli:prod');
  const out = join(dir, `stdout-${args[0]!}.json`);
  const quote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;
  const line = ['exec', command.file, ...command.args, ...args].map(quote).join(' ');
  const child = spawn('script', ['--quiet', '--flush', '--return', '--command', `${line} > ${quote(out)}`, '/dev/null'], {
    cwd: ROOT, env: { PATH: command.path, HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let screen = '';
  child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (screen += chunk.toString()));
  const [code] = await once(child, 'exit') as [number | null];
  return { code, screen, stdout: await readFile(out, 'utf8') };
}

/** What a terminal shows once each carriage return and erase-line has done its work: the lines left on the screen. */
function drawn(screen: string): { readonly redraws: number; readonly lines: readonly string[] } {
  const redraws = screen.split('\r\x1b[K').length - 1;
  const lines = screen.split(/\r?\n/).map((row) => row.split('\r\x1b[K').at(-1)!.replace(/\r$/, ''));
  return { redraws, lines };
}

describe('progress of import and check on stderr (npm run cli:prod)', function () {
  this.timeout(180_000);
  const testDb = useTestDatabase();
  let dir: string;
  let file: string;
  const cli = (args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> => runCli(args, { DATABASE_URL: testDb.url, ...env });

  before(async function () {
    dir = await mkdtemp(join(tmpdir(), 'pcat-progress-'));
    file = join(dir, 'catalog.json');
    await writeFile(file, largeCatalog());
  });
  after(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  it('import in a pipe: plain lines on stderr, each a step further, then one saying what it did; stdout holds only the JSON', async function () {
    const run = await cli(['import', file, '--json'], EVERY_STEP);
    expect(run.code, run.stderr).to.equal(0);
    expect((run.json() as { products: object }).products).to.deep.equal({ created: PRODUCTS, updated: 0, unchanged: 0, deleted: 0 });
    expect(run.stderr).to.not.include('\r').and.not.include('\x1b');
    expect(run.stderr.endsWith('\n')).to.equal(true);
    const lines = run.stderr.slice(0, -1).split('\n');
    // After the progress, the note that no Redis is set to tell running instances (this test sets none).
    expect(`${lines.pop()!}\n`).to.equal(NO_REDIS_HINT);
    expect(lines.at(-1)).to.match(IMPORT_DONE);
    for (const line of lines.slice(0, -1)) expect(line).to.match(new RegExp(`${IMPORT_LINE.source}|${IMPORT_FINISHING.source}`));
    const reading = climbing(lines, IMPORT_LINE);
    // The first batch written while the file is still being read: the line follows the work, not its end.
    expect(reading.some(([, read, written]) => written === 500 && read! > 500)).to.equal(true);
    expect(reading.at(-1)).to.deep.equal([100, PRODUCTS, PRODUCTS]);
    expect(lines.filter((line) => IMPORT_FINISHING.test(line))).to.have.length.at.least(1);
  });

  it('check in a pipe: one read of the file, each product read and found valid, then one line for the whole; stdout holds only the JSON summary', async function () {
    const run = await cli(['check', file, '--json'], EVERY_STEP);
    expect(run.code, run.stderr).to.equal(0);
    expect((run.json() as { totals: { pdp_entries: number } }).totals.pdp_entries).to.equal(PRODUCTS);
    expect(run.stderr).to.not.include('\r').and.not.include('\x1b');
    const lines = run.stderr.slice(0, -1).split('\n');
    expect(lines.at(-1)).to.match(CHECK_SUMMARY_DONE);
    for (const line of lines.slice(0, -1)) expect(line).to.match(CHECK_CHECKING);
    const counts = climbing(lines, CHECK_CHECKING);
    expect(counts[0]).to.deep.equal([0, 0]);
    expect(counts.at(-1)![0]).to.be.within(PRODUCTS / 2, PRODUCTS);
    // Every product of this file is valid: as many valid as read, on every line.
    for (const [read, valid] of counts) expect(valid).to.equal(read);
  });

  it('check --entries in a pipe: the file validated, then each product checked, then one line for the whole; stdout holds only the report', async function () {
    const run = await cli(['check', file, '--json', '--entries'], EVERY_STEP);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout.slice(0, -1).split('\n')).to.have.length(PRODUCTS);
    expect(run.stderr).to.not.include('\r').and.not.include('\x1b');
    const lines = run.stderr.slice(0, -1).split('\n');
    expect(lines.at(-1)).to.match(CHECK_DONE);
    const validating = lines.filter((line) => CHECK_VALIDATING.test(line));
    const reporting = lines.filter((line) => CHECK_REPORTING.test(line));
    expect(validating.length + reporting.length).to.equal(lines.length - 1);
    // Every validating line comes before the first reporting one.
    expect(lines.indexOf(validating.at(-1)!)).to.be.below(lines.indexOf(reporting[0]!));
    // Each stage counts from 0 on its own read of the file, and the last line says what the whole came to.
    const read = climbing(lines, CHECK_VALIDATING).map(([n]) => n!);
    const checked = climbing(lines, CHECK_REPORTING).map(([n]) => n!);
    for (const counts of [read, checked]) {
      expect(counts[0]).to.equal(0);
      expect(counts.at(-1)).to.be.within(PRODUCTS / 2, PRODUCTS);
    }
  });

  it('--quiet prints no progress, and the output is the same', async function () {
    const imported = await cli(['import', file, '--json', '--quiet'], EVERY_STEP);
    expect([imported.code, imported.stderr]).to.deep.equal([0, '']);
    expect((imported.json() as { products: object }).products).to.deep.equal({ created: 0, updated: 0, unchanged: PRODUCTS, deleted: 0 });
    const checked = await cli(['check', '-q', file], EVERY_STEP);
    expect([checked.code, checked.stderr]).to.deep.equal([0, '']);
    expect(checked.stdout).to.match(/^1,200 PDP entries: /m);
    const refused = await cli(['migrate', '--quiet']);
    expect([refused.code, refused.stderr.split('\n')[0]]).to.deep.equal([2, 'error: migrate takes no --quiet']);
  });

  it('import on a terminal: one line redrawn in place, ended by the last; stdout, sent to a file, holds only the JSON', async function () {
    const run = await inTerminal(['import', file, '--json'], { DATABASE_URL: testDb.url, ...EVERY_STEP }, dir);
    expect(run.code, run.screen).to.equal(0);
    expect((JSON.parse(run.stdout) as { products: object }).products).to.deep.equal({ created: 0, updated: 0, unchanged: PRODUCTS, deleted: 0 });
    const { redraws, lines } = drawn(run.screen);
    expect(redraws, run.screen).to.be.above(2);
    // What stays on the screen: the last line alone, and the note that no Redis is set.
    const shown = lines.filter((line) => line !== '');
    expect(shown, run.screen).to.have.length(2);
    expect(shown[0]).to.match(IMPORT_DONE);
    expect(`${shown[1]!}\n`).to.equal(NO_REDIS_HINT);
    // Each draw before it is a progress line, cut to the terminal's width (80 columns where it tells none).
    const draws = run.screen.split('\r\x1b[K').slice(1, -1);
    for (const draw of draws) {
      expect(draw).to.not.include('\n');
      expect(draw.length).to.be.at.most(79);
      expect(draw).to.match(/^import: /);
    }
  });

  it('check --entries on a terminal: the same, through both stages', async function () {
    const run = await inTerminal(['check', file, '--json', '--entries'], EVERY_STEP, dir);
    expect(run.code, run.screen).to.equal(0);
    expect(run.stdout.slice(0, -1).split('\n')).to.have.length(PRODUCTS);
    const { redraws, lines } = drawn(run.screen);
    expect(redraws).to.be.above(2);
    const shown = lines.filter((line) => line !== '');
    expect(shown, run.screen).to.have.length(1);
    expect(shown[0]).to.match(CHECK_DONE);
    const draws = run.screen.split('\r\x1b[K').slice(1, -1);
    expect(draws.some((draw) => draw.startsWith('check: validating: '))).to.equal(true);
    expect(draws.some((draw) => draw.startsWith('check: reporting: '))).to.equal(true);
  });

  it('check of a small file (the demo catalog) gives its size in KB, never "0.0 of 0.0 MB", and ends with the real count', async function () {
    const demo = join(ROOT, 'catalogs', 'demo-catalog.json');
    const kilobytes = ((await stat(demo)).size / 1_000).toFixed(1);
    const run = await cli(['check', demo], EVERY_STEP);
    expect(run.code, run.stderr).to.equal(0);
    const lines = run.stderr.slice(0, -1).split('\n');
    expect(run.stderr).to.not.include(' MB');
    for (const line of lines.slice(0, -1)) expect(line).to.match(new RegExp(`^check: checking: [0-9.]+ of ${kilobytes.replace('.', '\\.')} KB \\(\\d+%\\)`));
    expect(lines.some((line) => line.startsWith(`check: checking: ${kilobytes} of ${kilobytes} KB (100%); `)), run.stderr).to.equal(true);
    expect(lines.at(-1)).to.match(new RegExp(`^check: done in [0-9.]+ s: 5 products checked, from a file of ${kilobytes.replace('.', '\\.')} KB$`));
  });

  it('a refused file: the last line counts every product read, those with problems too, and how many were valid', async function () {
    // The demo's first partner with its products[1] and products[3] broken: four products read, two valid.
    const document = JSON.parse(await readFile(join(ROOT, 'catalogs', 'demo-catalog.json'), 'utf8')) as { partners: { products: Record<string, unknown>[] }[] };
    document.partners = document.partners.slice(0, 1);
    Object.assign(document.partners[0]!.products[1]!, { sku: 'BAD SKU' });
    Object.assign(document.partners[0]!.products[3]!, { image: 'not a url' });
    const broken = join(dir, 'broken.json');
    await writeFile(broken, JSON.stringify(document));
    const problems = [
      'error: catalog refused, 2 problems:',
      'partners[0].products[1].sku: must be 1 to 50 of letters, digits, "-", "_", "."; got "BAD SKU"',
      'partners[0].products[3].image: must be an absolute http(s) URL; got "not a url"',
    ];
    for (const [command, stopped] of [
      [['check', broken], /^check: stopped after [0-9.]+ s: 4 products read, 2 valid$/],
      [['check', broken, '--entries'], /^check: stopped after [0-9.]+ s: 4 products read, 2 valid$/],
      [['import', broken], /^import: stopped after [0-9.]+ s: 4 products read, 0 written$/],
    ] as const) {
      const run = await cli(command, EVERY_STEP);
      expect([run.code, run.stdout], command.join(' ')).to.deep.equal([1, '']);
      const lines = run.stderr.slice(0, -1).split('\n');
      const at = lines.indexOf(problems[0]!);
      expect(lines.slice(at, at + 3), run.stderr).to.deep.equal(problems);
      expect(lines[at - 1], run.stderr).to.match(stopped);
    }
  });

  it('a bad PROGRESS_INTERVAL_MS is refused, naming it', async function () {
    const run = await cli(['check', file], { PROGRESS_INTERVAL_MS: 'often' });
    expect([run.code, run.stdout, run.stderr]).to.deep.equal([1, '', 'error: PROGRESS_INTERVAL_MS: must be a whole number of milliseconds from 0 to 3600000; got "often"\n']);
  });
});
