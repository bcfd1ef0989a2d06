import { expect } from 'chai';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkStructuredData } from '../src/adapters/structured-data/google-rules.js';
import { parseCatalogSource } from '../src/domain/catalog-source.js';
import { jsonLdOutcome } from '../src/domain/json-ld.js';
import { videoObjectFindings } from '../src/domain/structured-data.js';
import { fixtureDocument } from './fixtures/catalog-fixture.js';
import { catalogWithBom, defectiveCatalogs } from './fixtures/defective-catalogs.js';
import { variedCatalogDocument } from './fixtures/varied-catalog.js';
import { cli, type CliRun } from './support/cli-process.js';
import { ROOT } from './support/script-command.js';

interface EntryJson {
  partner: string;
  sku: string;
  pdp_url: string;
  json_ld: 'generated' | 'null';
  reason: string | null;
  errors: { path: string; message: string; fields: string[] }[];
  warnings: { path: string; message: string; fields: string[] }[];
  notes: { path: string; message: string; fields: string[] }[];
}

type Severity = 'error' | 'warning' | 'note';

/** Errors, then warnings, then notes. */
const RANK: Record<Severity, number> = { error: 0, warning: 1, note: 2 };

interface FindingJson {
  severity: Severity;
  path: string;
  message: string;
  fields: string[];
  entries: number;
  first_entries: { partner: string; sku: string; pdp_url: string }[];
}

interface SummaryJson {
  findings: FindingJson[];
  no_json_ld: { reason: string; entries: number; first_entries: { partner: string; sku: string; pdp_url: string }[] }[];
  totals: { pdp_entries: number; with_json_ld: number; with_no_error_on_video_object: number; without_json_ld: number };
}

/** `check --json --entries`: a JSON object a line. */
function entriesOf(run: CliRun): EntryJson[] {
  expect(run.stdout.endsWith('\n'), run.stdout.slice(-200)).to.equal(true);
  return run.stdout.slice(0, -1).split('\n').map((line) => JSON.parse(line) as EntryJson);
}

/** Each entry of a catalog document with the validator run on its JSON-LD alone, in file order. */
async function entryByEntry(document: unknown): Promise<EntryJson[]> {
  const entries: EntryJson[] = [];
  for (const partner of parseCatalogSource(document).partners) {
    for (const product of partner.products) {
      for (const entry of product.pdpUrls) {
        const { jsonLd, reason } = jsonLdOutcome(entry, product, partner.name);
        const findings = jsonLd === null ? { errors: [], warnings: [], notes: [] } : videoObjectFindings(await checkStructuredData(jsonLd));
        const copy = (list: typeof findings.errors) => list.map((f) => ({ ...f, fields: [...f.fields] }));
        entries.push({
          partner: partner.id, sku: product.sku, pdp_url: entry.pdpUrl, json_ld: jsonLd === null ? 'null' : 'generated', reason,
          errors: copy(findings.errors), warnings: copy(findings.warnings), notes: copy(findings.notes),
        });
      }
    }
  }
  return entries;
}

/** The summary entries make, as the report by finding states it; the findings' order aside. */
function summaryOf(entries: readonly EntryJson[]): SummaryJson {
  const findings = new Map<string, FindingJson>();
  const reasons = new Map<string, SummaryJson['no_json_ld'][number]>();
  const named = ({ partner, sku, pdp_url }: EntryJson) => ({ partner, sku, pdp_url });
  for (const entry of entries) {
    const seen = new Set<string>();
    for (const [severity, list] of [['error', entry.errors], ['warning', entry.warnings], ['note', entry.notes]] as const) {
      for (const { path, message, fields } of list) {
        const key = JSON.stringify([severity, path, message, fields]);
        if (seen.has(key)) continue;
        seen.add(key);
        const group = findings.get(key) ?? { severity, path, message, fields, entries: 0, first_entries: [] };
        findings.set(key, group);
        group.entries += 1;
        if (group.first_entries.length < 3) group.first_entries.push(named(entry));
      }
    }
    if (entry.reason !== null) {
      const group = reasons.get(entry.reason) ?? { reason: entry.reason, entries: 0, first_entries: [] };
      reasons.set(entry.reason, group);
      group.entries += 1;
      if (group.first_entries.length < 3) group.first_entries.push(named(entry));
    }
  }
  const generated = entries.filter((e) => e.json_ld === 'generated');
  return {
    findings: [...findings.values()].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    no_json_ld: [...reasons.values()],
    totals: {
      pdp_entries: entries.length, with_json_ld: generated.length, without_json_ld: entries.length - generated.length,
      with_no_error_on_video_object: generated.filter((e) => e.errors.length === 0).length,
    },
  };
}

type Doc = { partners: { products: { sku: string; videos?: Record<string, unknown>[] }[] }[] };

/** The fixture, with its first video given a thumbnail and an upload date: one rich object, the rest spec-exact or null. */
function catalogWithOneRichVideo(): Doc {
  const doc = fixtureDocument() as unknown as Doc;
  const tent = doc.partners[0]!.products.find((p) => p.sku === 'TENT-2P')!;
  Object.assign(tent.videos![0]!, { thumbnail_url: 'https://cdn.example/t/pitch.jpg', upload_date: '2026-03-14' });
  return doc;
}

describe('operator CLI: check', function () {
  this.timeout(60_000);
  let dir: string;
  before(async function () {
    dir = await mkdtemp(join(tmpdir(), 'pcat-check-'));
  });
  after(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  async function write(name: string, document: unknown): Promise<string> {
    const file = join(dir, name);
    await writeFile(file, JSON.stringify(document));
    return file;
  }

  it('reports every entry of a valid file with --entries, with the reason of each null and Google\'s findings, needing no database', async function () {
    const file = await write('good.json', catalogWithOneRichVideo());
    const run = await cli(['check', file, '--json', '--entries', '--quiet'], { DATABASE_URL: 'mysql://nobody@127.0.0.1:1/none' });
    expect(run.stderr).to.equal('');
    expect(run.code).to.equal(0);
    const entries = entriesOf(run);
    const at = (url: string): EntryJson => entries.find((e) => e.pdp_url === url)!;
    expect(entries.map((e) => Object.keys(e))).to.deep.equal(entries.map(() => ['partner', 'sku', 'pdp_url', 'json_ld', 'reason', 'errors', 'warnings', 'notes']));
    expect(entries).to.have.length(7);

    // Every kind of null, each with its reason and no findings.
    expect([at('https://shop.example/p/124'), at('https://shop.example/p/125'), at('https://shop.example/p/126'), at('https://shop.example/p/127')]
      .map((e) => [e.json_ld, e.reason, e.errors.length])).to.deep.equal([
      ['null', 'no_transcript', 0], ['null', 'video_unpublished', 0], ['null', 'no_video_file_url', 0], ['null', 'no_video_ref', 0],
    ]);

    // The rich object: no error; its Product lacks offers, which a catalog cannot give: a note, a rule for a Product rich result.
    const rich = at('https://shop.example/p/123');
    expect([rich.json_ld, rich.reason]).to.deep.equal(['generated', null]);
    expect(rich.errors).to.deep.equal([]);
    expect(rich.notes.some((e) => e.message === 'Required attribute "offers" is missing')).to.equal(true);
    expect([...rich.errors, ...rich.warnings].every((e) => e.path !== 'about')).to.equal(true);
    expect(rich.notes.every((e) => e.path === 'about')).to.equal(true);

    // A spec-exact object: the two fields Google requires are reported missing, so the validator really ran.
    const exact = at('https://outlet.example/tent?id=9');
    expect(exact.json_ld).to.equal('generated');
    // The VideoObject's own errors stay errors: Google shows no video rich result without them.
    expect(exact.errors.map((e) => [e.path, ...e.fields])).to.have.deep.members([['', 'thumbnailUrl'], ['', 'uploadDate']]);
    expect(exact.warnings.some((w) => w.fields.includes('duration'))).to.equal(true);
  });

  it('checks a partner\'s sandbox section\'s entries too, each under the sandbox\'s id, after the partner\'s own', async function () {
    const doc = catalogWithOneRichVideo();
    const acme = doc.partners[0]!;
    (acme as Doc['partners'][number] & { sandbox?: unknown }).sandbox = { products: [acme.products.find((p) => p.sku === 'TENT-2P')] };
    const file = await write('with-sandbox.json', doc);
    const run = await cli(['check', file, '--json', '--entries', '--quiet']);
    expect(run.code, run.stderr).to.equal(0);
    const entries = entriesOf(run);
    const tentEntries = (partner: string): [string, string][] => entries.filter((e) => e.partner === partner && e.sku === 'TENT-2P').map((e) => [e.pdp_url, e.json_ld]);
    expect(entries).to.have.length(7 + tentEntries('acme').length);
    expect(tentEntries('~acme')).to.deep.equal(tentEntries('acme'));
    const places = (partner: string): number[] => entries.flatMap((e, i) => (e.partner === partner ? [i] : []));
    expect(Math.min(...places('~acme'))).to.be.above(Math.max(...places('acme')));
  });

  it('prints a summary by finding by default: each finding once, with its entries counted and the first named, then the totals, what the findings mean and the verdict', async function () {
    const file = await write('good-summary.json', catalogWithOneRichVideo());
    const run = await cli(['check', file, '--quiet']);
    expect([run.code, run.stderr]).to.deep.equal([0, '']);
    const blocks = run.stdout.slice(0, -1).split('\n\n').map((block) => block.split('\n'));
    // Errors first: those of the two spec-exact objects; then the findings every object has, under the three entries with JSON-LD.
    const [specExact, everywhere, ...rest] = blocks;
    expect(specExact!.slice(0, 3)).to.deep.equal(['Found in 2 entries:', '  acme TENT-2P https://outlet.example/tent?id=9', '  globex SHARED-1 https://globex.example/shared']);
    expect(specExact).to.include.members(['error: Required attribute "thumbnailUrl" is missing', 'error: Required attribute "uploadDate" is missing']);
    expect(everywhere!.slice(0, 4)).to.deep.equal([
      'Found in 3 entries:', '  acme TENT-2P https://shop.example/p/123', '  acme TENT-2P https://outlet.example/tent?id=9', '  globex SHARED-1 https://globex.example/shared',
    ]);
    // The Product's findings are notes, whatever severity Google gave them: rules for a Product rich result, not for the video's.
    expect(everywhere).to.include('note: about: Required attribute "offers" is missing');
    expect(run.stdout).to.not.match(/^(error|warning): about/m);
    // Each finding once, errors before warnings before notes within a block.
    for (const block of [everywhere!, specExact!]) {
      const findings = block.slice(block.findIndex((line) => !line.startsWith(' ') && !line.startsWith('Found')));
      expect(new Set(findings).size).to.equal(findings.length);
      expect(findings.every((line) => /^(error|warning|note): /.test(line))).to.equal(true);
      const ranks = findings.map((line) => RANK[line.split(':')[0] as Severity]);
      expect(ranks).to.deep.equal([...ranks].sort());
    }
    expect(rest).to.deep.equal([
      ['No JSON-LD (no_transcript) in 1 entry:', '  acme TENT-2P https://shop.example/p/124'],
      ['No JSON-LD (video_unpublished) in 1 entry:', '  acme TENT-2P https://shop.example/p/125'],
      ['No JSON-LD (no_video_file_url) in 1 entry:', '  acme TENT-2P https://shop.example/p/126'],
      ['No JSON-LD (no_video_ref) in 1 entry:', '  acme TENT-2P https://shop.example/p/127'],
      ['7 PDP entries: 3 with JSON-LD (1 with no error on the VideoObject itself), 4 without (no_transcript 1, video_unpublished 1, no_video_file_url 1, no_video_ref 1)'],
      [
        'Errors and warnings are Google\'s findings on the VideoObject: an entry with an error gets no video rich result, and is imported all the same.',
        'Notes are Google\'s rules for a Product rich result, found on the Product the video is about: they matter only to a page that wants a Product rich result, not to the VideoObject on the page.',
      ],
      ['Valid: this file would be imported (2 partners, 7 products).'],
    ]);
  });

  it('on the valid demo catalog: no error on any Product, the notes said to be a Product rich result\'s, and a verdict that it would be imported', async function () {
    const run = await cli(['check', 'catalogs/demo-catalog.json', '--quiet']);
    expect([run.code, run.stderr]).to.deep.equal([0, '']);
    expect(run.stdout).to.not.match(/^(error|warning): about/m);
    expect(run.stdout).to.match(/^note: about: Required attribute "offers" is missing$/m);
    // The VideoObject's own errors are still errors.
    expect(run.stdout).to.match(/^error: Required attribute "thumbnailUrl" is missing$/m);
    expect(run.stdout).to.include('\nNotes are Google\'s rules for a Product rich result, found on the Product the video is about: ');
    expect(run.stdout.endsWith('\n\nValid: this file would be imported (2 partners, 5 products).\n')).to.equal(true);
  });

  it('docs/catalog-files.md quotes the demo catalog\'s summary, and an element of its --json, as check prints them', async function () {
    const page = await readFile(join(ROOT, 'docs', 'catalog-files.md'), 'utf8');
    const after = page.slice(page.indexOf('The summary of the bundled demo catalog'));
    const [, text] = /```\n([\s\S]*?)```/.exec(after)!;
    const [, json] = /```json\n([\s\S]*?)```/.exec(after)!;
    const [summary, summaryJson] = await Promise.all([
      cli(['check', 'catalogs/demo-catalog.json', '--quiet']), cli(['check', 'catalogs/demo-catalog.json', '--json', '--quiet']),
    ]);
    expect(text).to.equal(summary.stdout);
    expect((summaryJson.json() as SummaryJson).findings).to.deep.include(JSON.parse(json!));
  });

  it('names the first 3 entries of a finding found in more', async function () {
    const document = catalogWithOneRichVideo();
    const tent = document.partners[0]!.products[0] as unknown as { pdp_urls: { pdp_url: string }[] };
    tent.pdp_urls.push(...['a', 'b'].map((page) => ({ ...tent.pdp_urls[0]!, pdp_url: `https://shop.example/p/123${page}` })));
    const run = await cli(['check', await write('more.json', document), '--quiet']);
    const lines = run.stdout.split('\n');
    const at = lines.findIndex((line) => line.startsWith('Found in 5 entries'));
    expect(lines.slice(at, at + 4)).to.deep.equal([
      'Found in 5 entries, the first 3:', '  acme TENT-2P https://shop.example/p/123', '  acme TENT-2P https://outlet.example/tent?id=9', '  acme TENT-2P https://shop.example/p/123a',
    ]);
  });

  it('--json prints the summary as one document: each finding with its severity, path, message, fields, entries and the first 3', async function () {
    const document = catalogWithOneRichVideo();
    // The spec-exact entry first: its own findings (2 entries) are met before those every object has (3).
    const pages = (document.partners[0]!.products[0] as unknown as { pdp_urls: unknown[] }).pdp_urls;
    pages.unshift(...pages.splice(1, 1));
    const run = await cli(['check', await write('good-json.json', document), '--json', '--quiet']);
    expect([run.code, run.stderr]).to.deep.equal([0, '']);
    const summary = run.json() as SummaryJson;
    // The VideoObject's own errors, in the two spec-exact objects; its Product's findings are notes.
    expect(summary.findings.filter((f) => f.severity === 'error').map((f) => [f.path, f.fields, f.entries])).to.deep.equal([['', ['thumbnailUrl'], 2], ['', ['uploadDate'], 2]]);
    expect(summary.findings.filter((f) => f.severity === 'note').every((f) => f.path === 'about')).to.equal(true);
    expect(summary.findings.filter((f) => f.severity !== 'note').every((f) => f.path !== 'about')).to.equal(true);
    expect(Object.keys(summary)).to.deep.equal(['findings', 'no_json_ld', 'totals']);
    expect(summary.totals).to.deep.equal({ pdp_entries: 7, with_json_ld: 3, with_no_error_on_video_object: 1, without_json_ld: 4 });
    // Errors first, then warnings, then notes, each the most common first.
    const ranks = summary.findings.map((f) => RANK[f.severity]);
    expect(ranks).to.deep.equal([...ranks].sort());
    for (const severity of ['error', 'warning', 'note']) {
      const counts = summary.findings.filter((f) => f.severity === severity).map((f) => f.entries);
      expect(counts).to.deep.equal([...counts].sort((a, b) => b - a));
    }
    expect(summary.no_json_ld.map((r) => [r.reason, r.entries])).to.deep.equal([['no_transcript', 1], ['video_unpublished', 1], ['no_video_file_url', 1], ['no_video_ref', 1]]);
  });

  it('on a catalog varied in shapes and values, finds for each entry what the validator finds on it alone, and sums them up exactly', async function () {
    const document = variedCatalogDocument();
    const file = await write('varied.json', document);
    const [entries, summary, expected] = await Promise.all([
      cli(['check', file, '--json', '--entries', '--quiet']), cli(['check', file, '--json', '--quiet']), entryByEntry(document),
    ]);
    expect([entries.code, entries.stderr, summary.code, summary.stderr]).to.deep.equal([0, '', 0, '']);
    const checked = entriesOf(entries);
    expect(checked).to.have.length(expected.length);
    checked.forEach((entry, i) => expect(entry, `entry ${i}: ${expected[i]!.partner} ${expected[i]!.pdp_url}`).to.deep.equal(expected[i]));
    // Shapes repeat with other values, and some entries have none.
    expect(new Set(expected.map((e) => JSON.stringify([e.errors, e.warnings]))).size).to.be.within(3, expected.length / 10);
    const reported = summary.json() as SummaryJson;
    expect({ ...reported, findings: [...reported.findings].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))) }).to.deep.equal(summaryOf(expected));
    // Errors first, then warnings, then notes, each the most common first.
    const order = reported.findings.map((f) => [RANK[f.severity], -f.entries]);
    expect(order).to.deep.equal([...order].sort(([s1, n1], [s2, n2]) => s1! - s2! || n1! - n2!));
  });

  it('prints a line per entry and the totals in text with --entries', async function () {
    const file = await write('good-text.json', catalogWithOneRichVideo());
    const run = await cli(['check', file, '--entries']);
    expect(run.code).to.equal(0);
    expect(run.stdout).to.include('acme TENT-2P https://shop.example/p/127: no JSON-LD (no_video_ref)');
    expect(run.stdout).to.match(/acme TENT-2P https:\/\/shop\.example\/p\/123: generated, 0 errors, \d+ warnings?, \d+ notes?\n {2}warning: /);
    expect(run.stdout).to.match(/\n {2}note: about: Required attribute "offers" is missing\n/);
    expect(run.stdout).to.include('7 PDP entries: 3 with JSON-LD (1 with no error on the VideoObject itself), 4 without (no_transcript 1, video_unpublished 1, no_video_file_url 1, no_video_ref 1)');
    expect(run.stdout.endsWith('\n\nValid: this file would be imported (2 partners, 7 products).\n')).to.equal(true);
  });

  it('refuses a bad file with every problem named by JSON path, and exits non-zero, whatever the report asked for', async function () {
    const doc = catalogWithOneRichVideo();
    Object.assign(doc.partners[0]!.products[0]!.videos![0]!, { thumbnail_url: 'not a url', upload_date: '2026-02-30' });
    const file = await write('bad.json', doc);
    for (const report of [[], ['--json'], ['--entries'], ['--json', '--entries']]) {
      const run = await cli(['check', file, ...report]);
      expect([run.code, run.stdout], report.join(' ')).to.deep.equal([1, '']);
      expect(run.stderr).to.include('partners[0].products[0].videos[0].thumbnail_url');
      expect(run.stderr).to.include('partners[0].products[0].videos[0].upload_date');
      // The problems stay errors, and the verdict ends what the command says.
      expect(run.stderr).to.include('error: catalog refused, 2 problems:\n');
      expect(run.stderr.endsWith('\nNot valid: 2 problems; nothing would be imported.\n'), run.stderr).to.equal(true);
    }
  });

  for (const { defect, bytes, problem } of defectiveCatalogs()) {
    it(`refuses ${defect} as import does, naming its place, and prints no report`, async function () {
      const file = join(dir, 'defective.json');
      await writeFile(file, bytes);
      const run = await cli(['check', file, '--quiet']);
      expect([run.code, run.stdout, run.stderr]).to.deep.equal([1, '', `error: catalog refused, 1 problem:\n${problem}\nNot valid: 1 problem; nothing would be imported.\n`]);
    });
  }

  it('reads a file opening with a byte order mark as the same file without one', async function () {
    const file = join(dir, 'bom.json');
    await writeFile(file, catalogWithBom());
    const [withBom, without] = await Promise.all([cli(['check', file, '--json']), cli(['check', await write('no-bom.json', fixtureDocument()), '--json'])]);
    expect(withBom.code, withBom.stderr).to.equal(0);
    expect(withBom.stdout).to.equal(without.stdout);
  });

  it('needs exactly one file; --entries is check\'s alone', async function () {
    const run = await cli(['check']);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include('check needs exactly one <file>');
    const imported = await cli(['import', 'catalogs/demo-catalog.json', '--entries']);
    expect([imported.code, imported.stderr.split('\n')[0]]).to.deep.equal([2, 'error: import takes no --entries']);
  });
});
