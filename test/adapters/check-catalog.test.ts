import { expect } from 'chai';
import { Writable } from 'node:stream';
import { checkCatalog, type CheckOptions } from '../../src/adapters/cli/check-catalog.js';
import { rememberedByShape } from '../../src/adapters/structured-data/findings-by-shape.js';
import { checkStructuredData } from '../../src/adapters/structured-data/google-rules.js';
import { piecesOfDocument, type CatalogPiece } from '../../src/domain/catalog-source.js';
import { searchableFixtureDocument } from '../fixtures/catalog-fixture.js';

/** stdout as the report sees it, and a way to wait until it holds some lines. */
class Output extends Writable {
  text = '';
  private waiting: { lines: number; resolve: () => void }[] = [];

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    const lines = this.lines();
    this.waiting = this.waiting.filter((wait) => (wait.lines <= lines ? (wait.resolve(), false) : true));
    done();
  }

  lines(): number {
    return this.text.split('\n').length - 1;
  }

  until(lines: number): Promise<void> {
    return lines <= this.lines() ? Promise.resolve() : new Promise((resolve) => this.waiting.push({ lines, resolve }));
  }
}

/** The pieces of a document handed on one at a time, each after `before` has let it through. */
async function* oneAtATime(document: unknown, before: (piece: CatalogPiece) => Promise<void>): AsyncGenerator<readonly CatalogPiece[]> {
  for (const piece of piecesOfDocument(document)) {
    await before(piece);
    yield [piece];
  }
}

describe('check: the report forms (in process)', function () {
  this.timeout(60_000);
  const checker = rememberedByShape(checkStructuredData);

  async function check(document: unknown, options: CheckOptions, pieces?: (read: number, out: Output) => AsyncIterable<readonly CatalogPiece[]>) {
    const out = new Output();
    let reads = 0;
    const stages: string[] = [];
    await checkCatalog({
      stdout: out,
      pieces: () => (pieces === undefined ? piecesOfDocument(document) : pieces(reads++, out)),
      checkStructuredData: checker,
      progress: { productRead: () => undefined, productValid: () => undefined, finish: () => undefined, startStage: (stage) => void stages.push(stage) },
    }, options);
    return { text: out.text, stages };
  }

  it('the summary: one read of the file, and nothing on stdout before the whole file has passed the rules', async function () {
    const document = searchableFixtureDocument();
    let printedBeforeTheEnd: string | undefined;
    const { text, stages } = await check(document, { json: false, entries: false }, (read, out) => (async function* () {
      expect(read).to.equal(0);
      yield* oneAtATime(document, () => Promise.resolve());
      printedBeforeTheEnd = out.text;
    })());
    expect(stages).to.deep.equal(['checking']);
    expect(printedBeforeTheEnd).to.equal('');
    expect(text).to.match(/^Found in \d+ entr(y|ies)/);
    expect(text).to.match(/\n\d+ PDP entries: .*\n\n(?:.+\n)+\nValid: this file would be imported \(.+\)\.\n$/);
  });

  it('--json --entries: a JSON line per entry, each written as soon as it is checked, while the file is still being read', async function () {
    const document = searchableFixtureDocument();
    const { text, stages } = await check(document, { json: true, entries: true }, (read, out) => {
      let entriesBefore = 0;
      // The second read, which reports: a product is handed on only once every entry before it is on stdout.
      return oneAtATime(document, async (piece) => {
        if (read === 0 || piece.kind !== 'product') return;
        await out.until(entriesBefore);
        entriesBefore += (piece.value as { pdp_urls?: unknown[] }).pdp_urls?.length ?? 0;
      });
    });
    expect(stages).to.deep.equal(['reporting']);
    const lines = text.slice(0, -1).split('\n');
    expect(lines.length).to.be.greaterThan(5);
    for (const line of lines) expect(Object.keys(JSON.parse(line) as object)).to.deep.equal(['partner', 'sku', 'pdp_url', 'json_ld', 'reason', 'errors', 'warnings', 'notes']);
  });

  it('--entries: the same entries as --json --entries, a line each with its findings below, then the totals, what the findings mean and the verdict', async function () {
    const document = searchableFixtureDocument();
    const [{ text }, ndjson] = await Promise.all([check(document, { json: false, entries: true }), check(document, { json: true, entries: true })]);
    const entries = ndjson.text.slice(0, -1).split('\n').map((line) => JSON.parse(line) as { partner: string; sku: string; pdp_url: string; errors: unknown[]; warnings: unknown[]; notes: unknown[] });
    const [report, legend, verdict] = text.slice(0, -1).split('\n\n');
    const heads = report!.split('\n').filter((line) => !line.startsWith('  '));
    expect(heads.slice(0, -1).map((line) => line.split(':').slice(0, 2).join(':'))).to.deep.equal(entries.map((e) => `${e.partner} ${e.sku} ${e.pdp_url}`));
    expect(report!.split('\n').filter((line) => line.startsWith('  ')).length).to.equal(entries.reduce((n, e) => n + e.errors.length + e.warnings.length + e.notes.length, 0));
    expect(heads.at(-1)).to.match(/^\d+ PDP entries: /);
    expect(legend!.split('\n').map((line) => line.split(' ')[0])).to.deep.equal(['Errors', 'Notes']);
    expect(verdict).to.match(/^Valid: this file would be imported \(\d+ partners?, \d+ products?(, \d+ sandbox products?)?\)\.$/);
  });

  it('the summary grows with the kinds of finding, not with the entries: a hundred times the products, a few digits more', async function () {
    // Copies of TENT-2P, each with SKU, video refs and pages of its own.
    const copies = (count: number) => {
      const document = searchableFixtureDocument() as { partners: { products: unknown[] }[] };
      const first = JSON.stringify(document.partners[0]!.products[0]);
      document.partners[0]!.products = Array.from({ length: count }, (_, i) => JSON.parse(first
        .replaceAll('"TENT-2P"', `"COPY-${i}"`).replaceAll('"tent-', `"c${i}-tent-`).replaceAll('.example/', `.example/c${i}/`)) as unknown);
      return document;
    };
    const [few, many] = await Promise.all([10, 1_000].map((count) => check(copies(count), { json: true, entries: false })));
    expect(many!.text.length - few!.text.length).to.be.within(1, 200);
  });

  it('--json: the summary as one document, its findings and reasons counting every entry --json --entries lists', async function () {
    const document = searchableFixtureDocument();
    const [summary, ndjson] = await Promise.all([check(document, { json: true, entries: false }), check(document, { json: true, entries: true })]);
    const entries = ndjson.text.slice(0, -1).split('\n').map((line) => JSON.parse(line) as { json_ld: string; reason: string | null });
    const parsed = JSON.parse(summary.text) as { findings: { entries: number }[]; no_json_ld: { entries: number }[]; totals: { pdp_entries: number; with_json_ld: number } };
    expect(parsed.totals.pdp_entries).to.equal(entries.length);
    expect(parsed.totals.with_json_ld).to.equal(entries.filter((e) => e.json_ld === 'generated').length);
    expect(parsed.no_json_ld.reduce((n, r) => n + r.entries, 0)).to.equal(entries.filter((e) => e.reason !== null).length);
    expect(Math.max(...parsed.findings.map((f) => f.entries))).to.be.at.most(parsed.totals.with_json_ld);
  });
});
