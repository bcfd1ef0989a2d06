import { expect } from 'chai';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { hashApiKey } from '../../src/domain/api-key.js';
import type { LookupResult } from '../../src/domain/lookup-result.js';
import { fixtureDocument, KEYS } from '../fixtures/catalog-fixture.js';
import { catalogWithBom, defectiveCatalogs } from '../fixtures/defective-catalogs.js';
import { expectNoKeyInOutput, logLines, type LogLine } from '../support/service-logs.js';
import { startService, type ServiceProcess } from '../support/service-process.js';

/*
 * The real service on memory storage, its CATALOG_FILE a temporary copy of the fixture that each
 * test changes as an operator would: written in place, replaced by a rename, or followed by SIGHUP.
 */

/** The longest any change may take to be served; every wait polls, none sleeps for a fixed time. */
const WAIT_MS = 10_000;

type Document = {
  partners: Array<{ api_keys: Array<{ id: string }>; products: Array<{ sku: string; title?: string; videos: Array<Record<string, unknown>> }> }>;
};

interface Answer {
  readonly status: number;
  readonly etag: string | null;
  readonly body: { error?: string; data?: LookupResult };
}

/** The fixture with the transcript of TENT-2P's first video (tent-pitch) refined. */
function refined(transcript: string): Document {
  const document = fixtureDocument() as Document;
  const tent = document.partners[0]!.products.find((p) => p.sku === 'TENT-2P')!;
  tent.videos[0] = { ...tent.videos[0], transcript };
  return document;
}

const transcriptOf = (answer: Answer): string | undefined => answer.body.data?.product.pdp_urls[0]?.json_ld?.transcript;

function idsOf(answer: Answer): unknown {
  const product = answer.body.data!.product;
  return { product: product.id, videos: product.videos.map((v) => v.id), pdpUrls: product.pdp_urls.map((e) => e.id) };
}

async function eventually<T>(what: string, probe: () => T | Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`not within ${WAIT_MS} ms: ${what}; last seen: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

describe('memory storage reloading its catalog file without a restart', function () {
  this.timeout(30_000);
  let dir: string;
  let service: ServiceProcess;
  let url: string;

  const start = async (file: string): Promise<void> => {
    // Polling for a change must not run into the rate limit.
    service = startService({ STORAGE: 'memory', CATALOG_FILE: file, RATE_LIMIT_PER_MINUTE: '100000' });
    [, url = ''] = await service.waitFor(/"url":"(http:\/\/[^"]+)"/);
  };
  const startOnFixture = (): Promise<void> => {
    writeFileSync(join(dir, 'catalog.json'), JSON.stringify(fixtureDocument()));
    return start(join(dir, 'catalog.json'));
  };
  /** Replaces the file by a rename, as editors and `mv` do. */
  const replace = (document: Document): void => {
    writeFileSync(join(dir, 'next.json'), JSON.stringify(document));
    renameSync(join(dir, 'next.json'), join(dir, 'catalog.json'));
  };
  const get = async (sku: string, key: string = KEYS.acme): Promise<Answer> => {
    const response = await fetch(`${url}/api/v1/public/sku/${sku}`, { headers: { 'X-API-Key': key }, signal: AbortSignal.timeout(5_000) });
    return { status: response.status, etag: response.headers.get('etag'), body: (await response.json()) as Answer['body'] };
  };
  const reloads = (): LogLine[] => logLines(service).filter((l) => l.msg === 'catalog reloaded' || l.msg === 'catalog reload refused');
  const nextReload = async (after: number): Promise<LogLine> =>
    (await eventually('a reload logged', () => reloads().slice(after), (lines) => lines.length > 0))[0]!;

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'pcat-reload-'));
  });
  afterEach(function () {
    service.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves a file rewritten in place: the refined transcript under the same IDs, with a new ETag', async function () {
    await startOnFixture();
    const before = await get('TENT-2P');
    writeFileSync(join(dir, 'catalog.json'), JSON.stringify(refined('A refined transcript.')));
    const after = await eventually('the refined transcript served', () => get('TENT-2P'), (a) => transcriptOf(a) === 'A refined transcript.');
    expect(after.status).to.equal(200);
    expect(idsOf(after)).to.deep.equal(idsOf(before));
    expect(after.etag).to.be.a('string').and.not.equal(before.etag);
  });

  it('refuses a bad file, logging every problem by JSON path, and keeps serving the catalog it had', async function () {
    await startOnFixture();
    const before = await get('TENT-2P');
    const document = fixtureDocument() as Document;
    document.partners[0]!.products[0]!.sku = 'BAD SKU';
    delete document.partners[1]!.products[1]!.title;
    replace(document);
    const refusal = await nextReload(0);
    expect(refusal.msg).to.equal('catalog reload refused');
    const problems = refusal.problems as string[];
    expect(problems.some((p) => p.startsWith('partners[0].products[0].sku: ')), problems.join('\n')).to.equal(true);
    expect(problems.some((p) => p.startsWith('partners[1].products[1].title: ')), problems.join('\n')).to.equal(true);
    const after = await get('TENT-2P');
    expect(after.status).to.equal(200);
    expect(after.etag).to.equal(before.etag);
    expect(after.body).to.deep.equal(before.body);
    expect((await get('GLOBEX-ONLY', KEYS.globex)).status).to.equal(200);
    expectNoKeyInOutput([service]);
  });

  it('refuses each file with a defect in its bytes by its place, as check and import do, and keeps serving; takes a byte order mark', async function () {
    await startOnFixture();
    const before = await get('TENT-2P');
    let seen = 0;
    for (const { defect, bytes, problem } of defectiveCatalogs()) {
      writeFileSync(join(dir, 'next.json'), bytes);
      renameSync(join(dir, 'next.json'), join(dir, 'catalog.json'));
      // The reload of this file, logged with exactly its one problem (a rename may be heard twice).
      const refused = (l: LogLine): boolean => l.msg === 'catalog reload refused' && JSON.stringify(l.problems) === JSON.stringify([problem]);
      await eventually(`${defect} refused`, () => reloads().slice(seen), (lines) => lines.some(refused));
      seen = reloads().length;
      expect(await get('TENT-2P'), defect).to.deep.equal(before);
      expect((await get('DUP-SKU-2')).status, defect).to.equal(404);
    }
    writeFileSync(join(dir, 'next.json'), catalogWithBom());
    renameSync(join(dir, 'next.json'), join(dir, 'catalog.json'));
    expect(await nextReload(seen)).to.include({ msg: 'catalog reloaded' });
    expect(await get('TENT-2P')).to.deep.equal(before);
  });

  it('on SIGHUP with the file unchanged, reloads it, finds everything unchanged and keeps running', async function () {
    await startOnFixture();
    const before = await get('TENT-2P');
    service.child.kill('SIGHUP');
    const reload = await nextReload(0);
    expect(reload).to.include({ msg: 'catalog reloaded', trigger: 'SIGHUP' });
    for (const kind of ['partners', 'api_keys', 'products', 'videos', 'pdp_entries']) {
      const { unchanged, ...changes } = reload[kind] as Record<string, number>;
      expect(unchanged, kind).to.be.greaterThan(0);
      expect(Object.values(changes).every((n) => n === 0), `${kind}: ${JSON.stringify(changes)}`).to.equal(true);
    }
    const after = await get('TENT-2P');
    expect(after.etag).to.equal(before.etag);
    expect(service.child.exitCode).to.equal(null);
  });

  it('on SIGHUP, reads the file as it is now', async function () {
    await startOnFixture();
    const before = await get('TENT-2P');
    writeFileSync(join(dir, 'catalog.json'), JSON.stringify(refined('Read on SIGHUP.')));
    service.child.kill('SIGHUP');
    // The signal's reload runs at once, before the watcher's, which waits for the file to settle.
    const reload = await nextReload(0);
    expect(reload).to.include({ msg: 'catalog reloaded', trigger: 'SIGHUP' });
    expect(reload.videos).to.include({ updated: 1, created: 0, deleted: 0 });
    const after = await get('TENT-2P');
    expect(transcriptOf(after)).to.equal('Read on SIGHUP.');
    expect(idsOf(after)).to.deep.equal(idsOf(before));
  });

  it('serves a test key the file lists its partner\'s sandbox, and shows the sandbox and the key as a reload changes them', async function () {
    const testKey = `pcat_test_${'d1'.repeat(20)}`;
    const withSandbox = (title: string, listed: boolean): Document => {
      const document = fixtureDocument() as Document & { partners: Array<Record<string, unknown>> };
      const acme = document.partners[0]!;
      if (listed) acme.api_keys.push({ id: 'acme-ci', mode: 'test', sha256: hashApiKey(testKey) } as { id: string });
      acme.sandbox = { products: [{ ...acme.products[0]!, title }] };
      return document;
    };
    writeFileSync(join(dir, 'catalog.json'), JSON.stringify(withSandbox('Sandbox tent', true)));
    await start(join(dir, 'catalog.json'));
    const live = await get('TENT-2P');
    expect((await get('TENT-2P', testKey)).body.data?.product.title).to.equal('Sandbox tent');
    expect((await get('abc-1', testKey)).status).to.equal(404);

    writeFileSync(join(dir, 'catalog.json'), JSON.stringify(withSandbox('Sandbox tent, refined', true)));
    service.child.kill('SIGHUP');
    expect(await nextReload(0)).to.deep.include({ msg: 'catalog reloaded', sandbox_products: { created: 0, updated: 1, unchanged: 4, deleted: 0 } });
    expect((await get('TENT-2P', testKey)).body.data?.product.title).to.equal('Sandbox tent, refined');
    expect(await get('TENT-2P')).to.deep.equal(live);

    writeFileSync(join(dir, 'catalog.json'), JSON.stringify(withSandbox('Sandbox tent, refined', false)));
    service.child.kill('SIGHUP');
    expect(await nextReload(1)).to.deep.include({ msg: 'catalog reloaded', api_keys: { created: 0, updated: 0, unchanged: 4, revoked: 1 } });
    expect((await get('TENT-2P', testKey)).status).to.equal(401);
    expectNoKeyInOutput([service]);
  });

  it('answers 404 for a product the file no longer lists and 401 for a key it no longer lists', async function () {
    await startOnFixture();
    expect((await get('abc-1')).status).to.equal(200);
    expect((await get('TENT-2P', KEYS.acmeSecond)).status).to.equal(200);
    const document = fixtureDocument() as Document;
    const acme = document.partners[0]!;
    acme.products = acme.products.filter((p) => p.sku !== 'abc-1');
    acme.api_keys = acme.api_keys.filter((k) => k.id !== 'acme-staging');
    replace(document);
    await eventually('abc-1 gone', () => get('abc-1'), (a) => a.status === 404);
    // One import, published at once: the key went with the product.
    expect((await get('TENT-2P', KEYS.acmeSecond)).status).to.equal(401);
    expect((await get('TENT-2P')).status).to.equal(200);
  });

  it('sees a change made by repointing a symlink on the path, as a mounted Kubernetes ConfigMap is updated', async function () {
    // dir/catalog.json -> ..data/catalog.json, ..data -> v1; an update swaps ..data for a link to v2.
    mkdirSync(join(dir, 'v1'));
    writeFileSync(join(dir, 'v1', 'catalog.json'), JSON.stringify(fixtureDocument()));
    symlinkSync('v1', join(dir, '..data'));
    symlinkSync(join('..data', 'catalog.json'), join(dir, 'catalog.json'));
    await start(join(dir, 'catalog.json'));
    mkdirSync(join(dir, 'v2'));
    writeFileSync(join(dir, 'v2', 'catalog.json'), JSON.stringify(refined('From the second version.')));
    symlinkSync('v2', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    await eventually('the second version served', () => get('TENT-2P'), (a) => transcriptOf(a) === 'From the second version.');
  });
});
