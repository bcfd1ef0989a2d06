import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The map of the code follows the code: the Layout of docs/architecture.md names every folder under
 * src, and every source file the page names exists where it says, so a folder added, moved or
 * renamed, or a file the page names moved or renamed, fails here until the page says where it went.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', '.git']);

/** Every folder under `path` (relative to the root), each before those inside it, as paths relative to `path`. */
function foldersUnder(path: string): string[] {
  return readdirSync(join(ROOT, path), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !SKIPPED_DIRECTORIES.has(entry.name))
    .flatMap((entry) => [entry.name, ...foldersUnder(join(path, entry.name)).map((inner) => join(entry.name, inner))]);
}

/** Every file under `path` (relative to the root), as paths relative to `path`. */
function filesUnder(path: string): string[] {
  if (!existsSync(join(ROOT, path))) return [];
  return readdirSync(join(ROOT, path), { withFileTypes: true }).flatMap((entry) => {
    if (entry.isFile()) return [entry.name];
    if (!entry.isDirectory() || SKIPPED_DIRECTORIES.has(entry.name)) return [];
    return filesUnder(join(path, entry.name)).map((inner) => join(entry.name, inner));
  });
}

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

/** The first fenced code block of the `## Layout` section of docs/architecture.md. */
function layoutBlock(): string {
  const section = /^## Layout\s*$([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(read('docs/architecture.md'))?.[1] ?? '';
  return /^```[^\n]*\n([\s\S]*?)^```/m.exec(section)?.[1] ?? '';
}

/** The `src/...` paths a text names, without a trailing slash. */
function srcPaths(text: string): string[] {
  return [...text.matchAll(/(?<![\w./-])src\/[\w./-]*/g)].map((match) => match[0].replace(/[./]+$/, ''));
}

/** Paths the repository's code lives under, as a page names them. */
const CODE_ROOTS = ['src', 'test', 'scripts', 'bench', 'client'];

/**
 * The `.ts` files a Markdown file names: every path like `src/adapters/http/pipeline.ts`, wherever it
 * is written, and in inline code every other file name, bare (`pipeline.ts`) or under a folder
 * (`http/pipeline.ts`), by its name alone.
 */
function namedTsFiles(markdown: string): { paths: Set<string>; names: Set<string> } {
  const rooted = new RegExp(`(?<![\\w./-])(?:${CODE_ROOTS.join('|')})/[\\w./-]*?\\.ts(?![\\w.])`, 'g');
  const paths = new Set([...markdown.matchAll(rooted)].map((match) => match[0]));
  const spans = [...markdown.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '').matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!);
  const names = new Set(spans.flatMap((span) => [...span.matchAll(/(?<![\w./-])[\w./-]+\.ts(?![\w.])/g)]
    .map((match) => match[0])
    .filter((file) => !paths.has(file))
    .map((file) => basename(file))));
  return { paths, names };
}

/** The files a page names that do not exist: a path not at its place, a bare name nowhere under the code's roots. */
function missingFiles(markdown: string): string[] {
  const { paths, names } = namedTsFiles(markdown);
  const existing = new Set(CODE_ROOTS.flatMap(filesUnder).map((file) => basename(file)));
  return [
    ...[...paths].filter((path) => !existsSync(join(ROOT, path))),
    ...[...names].filter((name) => !existing.has(name)),
  ];
}

describe('documentation layout', function () {
  it('finds the Layout block of docs/architecture.md and the folders under src', function () {
    expect(layoutBlock()).to.include('src/domain');
    expect(foldersUnder('src')).to.include.members(['domain', 'application', 'adapters']);
  });

  it('has the Layout of docs/architecture.md name every folder under src, and only folders that exist', function () {
    const named = srcPaths(layoutBlock());
    const folders = foldersUnder('src');
    expect({
      unnamed: folders.filter((folder) => !named.includes(`src/${folder}`)),
      missing: named.filter((path) => !existsSync(join(ROOT, path))),
    }, 'folders the Layout does not name, and paths it names that do not exist').to.deep.equal({ unnamed: [], missing: [] });
  });

  it('has docs/architecture.md name only source files that exist', function () {
    const page = read('docs/architecture.md');
    const { paths, names } = namedTsFiles(page);
    expect(paths.size, 'paths like src/....ts the page names').to.be.greaterThan(10);
    expect(names.size, 'file names the page gives in backticks').to.be.greaterThan(10);
    expect(missingFiles(page), 'files the page names that exist nowhere').to.deep.equal([]);
  });

  it('tells a missing file from one that exists, by path and by name', function () {
    expect(missingFiles('`pipeline.ts` and src/adapters/http/pipeline.ts')).to.deep.equal([]);
    expect(missingFiles('the `no-such-file.ts` and src/adapters/http/no-such-file.ts')).to.deep.equal([
      'src/adapters/http/no-such-file.ts',
      'no-such-file.ts',
    ]);
    expect(missingFiles('src/adapters/cache/pipeline.ts, a file of that name in another folder')).to.deep.equal([
      'src/adapters/cache/pipeline.ts',
    ]);
  });
});
