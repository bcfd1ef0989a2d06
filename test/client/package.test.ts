import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { KEYS } from '../fixtures/catalog-fixture.js';
import { ROOT } from '../support/script-command.js';
import { memoryInfrastructure, startTestServer, type TestServer } from '../support/test-server.js';

/*
 * The client as a partner gets it, by the "Installing" section of client/README.md word for word: its
 * first command block run at the repository's root (npm pack, whose prepack builds), its second in a
 * project of its own outside the repository with the tarball copied in (offline). Then the package is
 * used with `import` and with `require()` by the Node.js running the tests, and its declarations
 * type-checked by a consumer.
 */

const run = promisify(execFile);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** A child's environment: this Node.js first on PATH (npm runs under it), npm offline and quiet. */
function environment(cache: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter),
    npm_config_cache: cache,
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  };
}

/** The shell commands of each `sh` block of the README's "Installing" section, comments and blank lines left out. */
function installingCommands(readme: string): string[][] {
  const section = readme.split('\n## Installing\n')[1]?.split('\n## ')[0];
  if (section === undefined) throw new Error('client/README.md has no "Installing" section');
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((block) =>
    block[1]!.split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#')));
}

describe('client: the package npm pack makes', function () {
  this.timeout(180_000);
  let server: TestServer | undefined;
  let dir: string | undefined;
  let env: NodeJS.ProcessEnv;
  let tarball: string;
  let installed: string[];
  let files: string[];
  let project: string;

  before(async function () {
    server = await startTestServer(await memoryInfrastructure());
    dir = mkdtempSync(join(tmpdir(), 'pcat-client-package-'));
    env = environment(join(dir, 'npm-cache'));
    const blocks = installingCommands(readFileSync(join(ROOT, 'client', 'README.md'), 'utf8'));
    expect(blocks, 'two command blocks: the pack, then the install').to.have.length(2);
    const [pack, install] = blocks as [string[], string[]];
    // At the root, as written; the tarball goes to a folder of the test's own rather than into the repository.
    const tarballs = join(dir, 'tarballs');
    mkdirSync(tarballs);
    for (const command of pack) await run('sh', ['-c', command], { cwd: ROOT, env: { ...env, npm_config_pack_destination: tarballs }, maxBuffer: 16 * 1024 * 1024 });
    const made = readdirSync(tarballs);
    expect(made, 'one tarball').to.have.length(1);
    tarball = made[0]!;
    project = join(dir, 'consumer');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }, null, 2)}\n`);
    copyFileSync(join(tarballs, tarball), join(project, tarball));
    installed = install;
    for (const command of install) await run('sh', ['-c', command], { cwd: project, env });
    const { stdout } = await run('tar', ['-tzf', join(tarballs, tarball)]);
    files = stdout.split('\n').filter((line) => line !== '').map((line) => line.replace(/^package\//, ''));
  });
  after(async function () {
    await server?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('is the tarball the README names, installed by its path, from the version in client/package.json', function () {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'client', 'package.json'), 'utf8')) as { version: string };
    expect(tarball).to.equal(`partner-catalog-client-${version}.tgz`);
    expect(installed).to.deep.equal([`npm install ./${tarball}`]);
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    expect(manifest.dependencies).to.deep.equal({ '@partner-catalog/client': `file:${tarball}` });
  });

  it('holds the compiled JavaScript, its declarations, README, LICENSE and package.json, and nothing else', function () {
    const paths = [...files].sort();
    const unexpected = paths.filter((path) => !/^dist\/.+\.(js|d\.ts)$/.test(path) && !['README.md', 'LICENSE', 'package.json'].includes(path));
    expect(unexpected).to.deep.equal([]);
    expect(paths).to.include.members(['README.md', 'LICENSE', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/client.js', 'dist/client.d.ts']);
    // Every module comes with its declarations.
    const modules = paths.filter((path) => path.endsWith('.js'));
    expect(paths.filter((path) => path.endsWith('.d.ts'))).to.deep.equal(modules.map((path) => path.replace(/\.js$/, '.d.ts')));
  });

  const consumers = {
    'import': ['lookup.mjs', `import { createClient } from '@partner-catalog/client';\n`],
    'require()': ['lookup.cjs', `const { createClient } = require('@partner-catalog/client');\n`],
  } as const;
  for (const [how, [file, load]] of Object.entries(consumers)) {
    it(`looks a product up when loaded with ${how} on Node.js ${process.versions.node}`, async function () {
      writeFileSync(join(project, file), `${load}
const client = createClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
client.getBySku('TENT-2P').then((result) => console.log(result.sku));
`);
      const { stdout, stderr } = await run(process.execPath, [file], { cwd: project, env: { ...env, BASE_URL: server!.url, API_KEY: KEYS.acme } });
      expect({ stdout, stderr }).to.deep.equal({ stdout: 'TENT-2P\n', stderr: '' });
    });
  }

  it('type-checks TypeScript consumers against the installed declarations: ESM on node16 and bundler, CommonJS on nodenext', async function () {
    const source = `import { createClient, PartnerCatalogError, type LookupResult } from '@partner-catalog/client';
const client = createClient({ baseUrl: 'http://localhost', apiKey: 'pcat_live_x' });
export const lookup = (sku: string): Promise<LookupResult> => client.getBySku(sku);
export const isClientError = (error: unknown): boolean => error instanceof PartnerCatalogError;
// @ts-expect-error: a number is not a SKU
void client.getBySku(1);
`;
    for (const file of ['consumer.mts', 'consumer.cts', 'consumer.ts']) writeFileSync(join(project, file), source);
    // The consumer has no @types/node: the DOM library declares fetch. Node's own library files are not checked.
    const common = ['--noEmit', '--strict', '--skipDefaultLibCheck', '--target', 'es2022', '--lib', 'es2022,dom'];
    const checks: [string, string[]][] = [
      ['ESM, node16', ['--module', 'node16', '--moduleResolution', 'node16', 'consumer.mts']],
      // TypeScript models require() of an ES module from 5.8, under nodenext (node16 refuses it).
      ['CommonJS, nodenext', ['--module', 'nodenext', '--moduleResolution', 'nodenext', 'consumer.cts']],
      ['bundler', ['--module', 'esnext', '--moduleResolution', 'bundler', 'consumer.ts']],
    ];
    for (const [consumer, args] of checks) {
      const result = await run(process.execPath, [TSC, ...common, ...args], { cwd: project, env }).catch((error: unknown) => error as { stdout: string });
      expect(result.stdout, consumer).to.equal('');
    }
  });
});
