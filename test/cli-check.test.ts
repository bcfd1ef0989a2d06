import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureDocument } from './fixtures/catalog-fixture.js';
import { catalogWithBom, defectiveCatalogs } from './fixtures/defective-catalogs.js';
import { cli } from './support/cli-process.js';

interface EntryJson {
  partner: string;
  sku: string;
  pdp_url: string;
  json_ld: 'generated' | 'null';
  reason: string | null;
  errors: { path: string; message: string; fields: string[] }[];
  warnings: { path: string; message: string; fields: string[] }[];
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

  it('reports every entry of a valid file, with the reason of each null and Google\'s findings, needing no database', async function () {
    const file = await write('good.json', catalogWithOneRichVideo());
    const run = await cli(['check', file, '--json', '--quiet'], { DATABASE_URL: 'mysql://nobody@127.0.0.1:1/none' });
    expect(run.stderr).to.equal('');
    expect(run.code).to.equal(0);
    const entries = run.json() as EntryJson[];
    const at = (url: string): EntryJson => entries.find((e) => e.pdp_url === url)!;
    expect(entries.map((e) => Object.keys(e))).to.deep.equal(entries.map(() => ['partner', 'sku', 'pdp_url', 'json_ld', 'reason', 'errors', 'warnings']));
    expect(entries).to.have.length(7);

    // Every kind of null, each with its reason and no findings.
    expect([at('https://shop.example/p/124'), at('https://shop.example/p/125'), at('https://shop.example/p/126'), at('https://shop.example/p/127')]
      .map((e) => [e.json_ld, e.reason, e.errors.length])).to.deep.equal([
      ['null', 'no_transcript', 0], ['null', 'video_unpublished', 0], ['null', 'no_video_file_url', 0], ['null', 'no_video_ref', 0],
    ]);

    // The rich object: nothing wrong with the VideoObject itself; its Product lacks offers, which a catalog cannot give.
    const rich = at('https://shop.example/p/123');
    expect([rich.json_ld, rich.reason]).to.deep.equal(['generated', null]);
    expect(rich.errors.filter((e) => e.path === '')).to.deep.equal([]);
    expect(rich.errors.length).to.be.greaterThan(0);
    expect(rich.errors.every((e) => e.path === 'about' && e.fields.some((f) => f === 'offers'))).to.equal(true);

    // A spec-exact object: the two fields Google requires are reported missing, so the validator really ran.
    const exact = at('https://outlet.example/tent?id=9');
    expect(exact.json_ld).to.equal('generated');
    const missing = exact.errors.filter((e) => e.path === '').flatMap((e) => e.fields);
    expect(missing).to.have.members(['thumbnailUrl', 'uploadDate']);
    expect(exact.warnings.some((w) => w.fields.includes('duration'))).to.equal(true);
  });

  it('prints a line per entry and a summary in text', async function () {
    const file = await write('good-text.json', catalogWithOneRichVideo());
    const run = await cli(['check', file]);
    expect(run.code).to.equal(0);
    expect(run.stdout).to.include('acme TENT-2P https://shop.example/p/127: no JSON-LD (no_video_ref)');
    expect(run.stdout).to.match(/acme TENT-2P https:\/\/shop\.example\/p\/123: generated, \d+ errors?, \d+ warnings?\n {2}error: about: /);
    expect(run.stdout).to.include('7 PDP entries: 3 with JSON-LD (1 with no error on the VideoObject itself), 4 without (no_transcript 1, video_unpublished 1, no_video_file_url 1, no_video_ref 1)');
  });

  it('refuses a bad file with every problem named by JSON path, and exits non-zero', async function () {
    const doc = catalogWithOneRichVideo();
    Object.assign(doc.partners[0]!.products[0]!.videos![0]!, { thumbnail_url: 'not a url', upload_date: '2026-02-30' });
    const run = await cli(['check', await write('bad.json', doc)]);
    expect(run.code).to.equal(1);
    expect(run.stdout).to.equal('');
    expect(run.stderr).to.include('partners[0].products[0].videos[0].thumbnail_url');
    expect(run.stderr).to.include('partners[0].products[0].videos[0].upload_date');
  });

  for (const { defect, bytes, problem } of defectiveCatalogs()) {
    it(`refuses ${defect} as import does, naming its place, and prints no report`, async function () {
      const file = join(dir, 'defective.json');
      await writeFile(file, bytes);
      const run = await cli(['check', file, '--quiet']);
      expect([run.code, run.stdout, run.stderr]).to.deep.equal([1, '', `error: catalog refused, 1 problem:\n${problem}\n`]);
    });
  }

  it('reads a file opening with a byte order mark as the same file without one', async function () {
    const file = join(dir, 'bom.json');
    await writeFile(file, catalogWithBom());
    const [withBom, without] = await Promise.all([cli(['check', file, '--json']), cli(['check', await write('no-bom.json', fixtureDocument()), '--json'])]);
    expect(withBom.code, withBom.stderr).to.equal(0);
    expect(withBom.stdout).to.equal(without.stdout);
  });

  it('needs exactly one file', async function () {
    const run = await cli(['check']);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include('check needs exactly one <file>');
  });
});
