import { expect } from 'chai';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { KEYS } from '../fixtures/catalog-fixture.js';
import { freePort } from '../support/redis.js';
import { ROOT } from '../support/script-command.js';
import { memoryInfrastructure, startTestServer, type TestServer } from '../support/test-server.js';

/*
 * The proof that the served OpenAPI document is all generic tools need: a client generated
 * from it with openapi-typescript and openapi-fetch type-checks and calls the running service, and
 * Prism's proxy, reading the same document, finds no violation in the same exchanges, HEAD included.
 */

/** One answer as the consumer saw it. */
interface Seen {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: unknown;
}
type CallTheApi = (baseUrl: string, key: string, unknownKey: string) => Promise<{ typed: Record<string, unknown>; exchanges: Exchanges }>;
type Exchanges = Record<(typeof EXCHANGES)[number], Seen>;
const EXCHANGES = ['lookup', 'revalidated', 'missing', 'anonymous', 'unknownKey', 'byId', 'feed', 'headLookup', 'headById', 'headFeed'] as const;

/**
 * A partner's code, as plain as it gets: the generated `paths` and openapi-fetch, no cast, no
 * hand-written type. The type assertions at its end are checked by tsc, and never run.
 */
const CONSUMER = `
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './openapi.js';

const seen = (response: Response, body: unknown) => ({ status: response.status, headers: Object.fromEntries(response.headers), body });

export async function callTheApi(baseUrl: string, key: string, unknownKey: string) {
  const api = createClient<paths>({ baseUrl, headers: { 'X-API-Key': key } });
  const tent = { path: { sku: 'TENT-2P' } };
  const lookup = await api.GET('/api/v1/public/sku/{sku}', { params: tent });
  const title: string | undefined = lookup.data?.data.product.title;
  const etag = lookup.response.headers.get('ETag') ?? '';
  const revalidated = await api.GET('/api/v1/public/sku/{sku}', { params: { ...tent, header: { 'If-None-Match': etag } } });
  const missing = await api.GET('/api/v1/public/sku/{sku}', { params: { path: { sku: 'NO-SUCH-SKU' } } });
  const code: SkuLookupCode | undefined = missing.error?.error;
  const anonymous = await createClient<paths>({ baseUrl }).GET('/api/v1/public/sku/{sku}', { params: tent });
  const unknownKeyAnswer = await createClient<paths>({ baseUrl, headers: { 'X-API-Key': unknownKey } }).GET('/api/v1/public/sku/{sku}', { params: tent });
  const byId = await api.GET('/api/v1/public/products/{id}', { params: { path: { id: 1 } } });
  const id: number | undefined = byId.data?.data.product.id;
  const feed = await api.GET('/api/v1/public/changes', { params: { query: { limit: 2 } } });
  const hasMore: boolean | undefined = feed.data?.has_more;
  const headLookup = await api.HEAD('/api/v1/public/sku/{sku}', { params: tent });
  const headById = await api.HEAD('/api/v1/public/products/{id}', { params: { path: { id: 1 } } });
  const headFeed = await api.HEAD('/api/v1/public/changes', { params: { query: { limit: 2 } } });
  return {
    typed: { title, code, id, hasMore },
    exchanges: {
      lookup: seen(lookup.response, lookup.data),
      revalidated: seen(revalidated.response, revalidated.data ?? revalidated.error),
      missing: seen(missing.response, missing.error),
      anonymous: seen(anonymous.response, anonymous.error),
      unknownKey: seen(unknownKeyAnswer.response, unknownKeyAnswer.error),
      byId: seen(byId.response, byId.data),
      feed: seen(feed.response, feed.data),
      headLookup: seen(headLookup.response, headLookup.data),
      headById: seen(headById.response, headById.data),
      headFeed: seen(headFeed.response, headFeed.data),
    },
  };
}

/** Every code the SKU lookup's error bodies declare, and no other. */
type SkuLookupCode = 'invalid_sku' | 'sku_not_found' | 'missing_api_key' | 'invalid_api_key' | 'rate_limit_exceeded' | 'internal_error' | 'service_unavailable'
  | 'bad_request' | 'request_timeout';
type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const skuCodesExactly: Exactly<NonNullable<Awaited<ReturnType<typeof lookupError>>>['error'], SkuLookupCode> = true;
async function lookupError(api: Client<paths>) {
  return (await api.GET('/api/v1/public/sku/{sku}', { params: { path: { sku: 'X' } } })).error;
}

/** What the document refuses, as a compiler sees it. Never called. */
export function refused(api: Client<paths>): void {
  // @ts-expect-error the product ID is an integer
  void api.GET('/api/v1/public/products/{id}', { params: { path: { id: '1' } } });
  // @ts-expect-error the feed's limit is an integer
  void api.GET('/api/v1/public/changes', { params: { query: { limit: '2' } } });
  // @ts-expect-error the lookup needs its SKU
  void api.GET('/api/v1/public/sku/{sku}', { params: { path: {} } });
  // @ts-expect-error no such path
  void api.GET('/api/v1/public/skus');
}
`;

/** The consumer's own project: strict, NodeNext, the repository's openapi-fetch. */
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    verbatimModuleSyntax: true,
    skipLibCheck: true,
    noEmit: true,
    types: [],
  },
  files: ['consumer.ts'],
};

function run(file: string, args: readonly string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, output: stdout + stderr });
    });
  });
}

/**
 * Between Prism and the service, passing everything through as it is but one thing: a HEAD answer's
 * Content-Type. Prism 5's proxy reads any answer typed as JSON with JSON.parse (only a 204 is spared),
 * so HEAD's empty body fails it with "invalid json response body" before it validates anything. The
 * document's HEAD responses declare no content, so the media type is nothing Prism would check there;
 * their status and every other header still reach it.
 */
async function headShim(upstream: string): Promise<{ url: string; close: () => Promise<void> }> {
  const target = new URL(upstream);
  const server: Server = createServer((req, res) => {
    const forwarded = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers, agent: false }, (answer) => {
      const headers = { ...answer.headers };
      if (req.method === 'HEAD') delete headers['content-type'];
      res.writeHead(answer.statusCode ?? 502, headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

interface Prism {
  readonly url: string;
  /** Its log, stdout and stderr, so far. */
  readonly output: () => string;
  stop(): Promise<void>;
}

/** `prism proxy <document> <upstream> --errors` on a free port, its own process group, once it listens. */
async function startPrism(documentFile: string, upstream: string): Promise<Prism> {
  const port = await freePort();
  const cli = join(ROOT, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js');
  const child: ChildProcess = spawn(process.execPath, [cli, 'proxy', documentFile, upstream, '--errors', '--host', '127.0.0.1', '--port', String(port), '--no-multiprocess'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  let output = '';
  const exited = once(child, 'exit');
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ }
    await exited;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Prism did not listen within 30 s:\n${output}`)), 30_000);
      const read = (chunk: Buffer): void => {
        output += chunk.toString('utf8');
        if (output.includes('Prism is listening on')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', read);
      child.stderr!.on('data', read);
      child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`Prism exited (${code}) before it listened:\n${output}`)); });
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `http://127.0.0.1:${port}`, output: () => output, stop };
}

describe('Generic tools, from the served OpenAPI document alone', function () {
  this.timeout(60_000);
  /** What `after` undoes, last first, however far `before` got. */
  const cleanups: (() => Promise<void>)[] = [];
  let server: TestServer;
  /** The consumer's project: the served document, its generated types, the consumer. */
  let dir: string;
  let callTheApi: CallTheApi | undefined;
  let direct: Exchanges | undefined;

  before(async function () {
    const started = await startTestServer(await memoryInfrastructure());
    cleanups.push(() => started.close());
    server = started;
    const made = await mkdtemp(join(tmpdir(), 'generic-tools-'));
    cleanups.push(() => rm(made, { recursive: true, force: true }));
    dir = made;
    const served = await (await fetch(`${server.url}/openapi.json`)).text();
    await writeFile(join(dir, 'openapi.json'), served);
    await writeFile(join(dir, 'openapi.ts'), astToString(await openapiTS(JSON.parse(served) as OpenAPI3, { silent: true })));
    await writeFile(join(dir, 'consumer.ts'), CONSUMER);
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  });

  after(async function () {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('openapi-typescript + openapi-fetch: the generated client type-checks, strict, without a cast', async function () {
    const tsc = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], dir);
    expect(tsc.output).to.equal('');
    expect(tsc.code).to.equal(0);
  });

  it('openapi-fetch: the generated client calls the running service: a lookup, a 304, a 404, a 401, by ID, a feed page, HEAD', async function () {
    const consumer = (await import(pathToFileURL(join(dir, 'consumer.ts')).href)) as { callTheApi: CallTheApi };
    callTheApi = consumer.callTheApi;
    const { typed, exchanges } = await consumer.callTheApi(server.url, KEYS.acme, KEYS.unknown);
    direct = exchanges;
    expect(typed).to.deep.equal({ title: 'Title TENT-2P', code: 'sku_not_found', id: 1, hasMore: true });
    const { lookup, revalidated, missing, anonymous, unknownKey, byId, feed, headLookup, headById, headFeed } = exchanges;
    expect(lookup.status).to.equal(200);
    expect((lookup.body as { data: { sku: string } }).data.sku).to.equal('TENT-2P');
    expect(lookup.headers.etag).to.match(/^"/);
    expect([revalidated.status, revalidated.headers.etag, revalidated.body]).to.deep.equal([304, lookup.headers.etag, '']);
    expect([missing.status, (missing.body as { error: string }).error]).to.deep.equal([404, 'sku_not_found']);
    expect([anonymous.status, (anonymous.body as { error: string }).error]).to.deep.equal([401, 'missing_api_key']);
    expect([unknownKey.status, (unknownKey.body as { error: string }).error]).to.deep.equal([401, 'invalid_api_key']);
    expect(byId.status).to.equal(200);
    expect(byId.body).to.deep.equal(lookup.body);
    expect(feed.status).to.equal(200);
    // The fixture was imported as the service imports a catalog file, so its feed holds that import.
    expect(feed.body).to.include({ has_more: true }).and.to.have.property('data').with.lengthOf(2);
    expect([headLookup.status, headLookup.body, headLookup.headers.etag, headLookup.headers['content-length']]).to.deep.equal([200, undefined, lookup.headers.etag, lookup.headers['content-length']]);
    expect([headById.status, headById.body]).to.deep.equal([200, undefined]);
    expect([headFeed.status, headFeed.body]).to.deep.equal([200, undefined]);
  });

  describe('Prism proxy --errors over the same requests', function () {
    let shim: Awaited<ReturnType<typeof headShim>>;
    before(async function () {
      if (callTheApi === undefined || direct === undefined) this.skip();
      shim = await headShim(server.url);
      cleanups.push(() => shim.close());
    });

    /** The consumer's calls through Prism, over `documentFile`, and Prism's log of them. */
    async function throughPrism(documentFile: string): Promise<{ exchanges: Exchanges; log: string }> {
      const prism = await startPrism(documentFile, shim.url);
      try {
        const { exchanges } = await callTheApi!(prism.url, KEYS.acme, KEYS.unknown);
        return { exchanges, log: prism.output() };
      } finally {
        await prism.stop();
      }
    }

    it('finds no violation: every status is the service\'s, no sl-violations header, no "Violation" logged', async function () {
      const { exchanges, log } = await throughPrism(join(dir, 'openapi.json'));
      for (const name of EXCHANGES) {
        const seen = exchanges[name];
        expect(seen.status, `${name}: ${JSON.stringify(seen.body)}`).to.equal(direct![name].status);
        expect(seen.headers, name).to.not.have.property('sl-violations');
        // Without a key Prism answers itself: the request lacks the security the document requires.
        if (name === 'anonymous') expect(seen.body, name).to.include({ type: 'https://stoplight.io/prism/errors#UNAUTHORIZED' });
        else expect(seen.body, name).to.deep.equal(direct![name].body);
      }
      expect(log).to.include('Forwarding "head" request');
      expect(log).to.not.match(/violation/i);
      expect(log.match(/Request terminated with error/g) ?? []).to.have.length(1);
      expect(log).to.include('Request terminated with error: https://stoplight.io/prism/errors#UNAUTHORIZED');
    });

    it('would fail on one: over a document whose ETag pattern the service\'s ETags break, Prism turns the lookups into its violation error', async function () {
      const served = (await (await fetch(`${server.url}/openapi.json`)).json()) as OpenAPI3 & { components: { headers: Record<string, { schema: { pattern: string } }> } };
      served.components.headers.ETag!.schema.pattern = '^W/';
      const broken = join(dir, 'broken.json');
      await writeFile(broken, JSON.stringify(served));
      const { exchanges, log } = await throughPrism(broken);
      // Under --errors an answer that breaks the document is replaced by Prism's 500, not logged as a "Violation:" line;
      // a lesser one (an undeclared status, say) is passed on with an sl-violations header and logged, both refused above.
      for (const name of ['lookup', 'revalidated', 'byId', 'headLookup', 'headById'] as const) {
        expect([exchanges[name].status, exchanges[name].headers['content-type']], name).to.deep.equal([500, 'application/problem+json']);
      }
      expect(exchanges.revalidated.body).to.deep.include({ type: 'https://stoplight.io/prism/errors#VIOLATIONS' });
      expect((exchanges.revalidated.body as { validation: { location: string[] }[] }).validation.map((v) => v.location.join('.'))).to.deep.equal(['response.header.etag']);
      expect(log.match(/Request terminated with error: https:\/\/stoplight\.io\/prism\/errors#VIOLATIONS/g)).to.have.length(5);
    });
  });
});
