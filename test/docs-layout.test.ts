import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The two maps of the code follow the code: the Layout of docs/architecture.md names every folder
 * under src, and the rest of that page every source file, so a folder or file added, moved or
 * renamed fails here until the docs say where it went.
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

/** The `.ts` file names in a Markdown file's inline code, outside fenced blocks. */
function backtickedTsFiles(markdown: string): Set<string> {
  const text = markdown.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '');
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!);
  return new Set(spans.flatMap((span) => [...span.matchAll(/[\w.-]+\.ts(?![\w.])/g)].map((match) => basename(match[0]))));
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

  it('has docs/architecture.md name every source file, and only files that exist', function () {
    const named = backtickedTsFiles(read('docs/architecture.md'));
    const sources = filesUnder('src').filter((file) => file.endsWith('.ts'));
    expect(sources.length).to.be.greaterThan(100);
    const existing = new Set(['src', 'scripts', 'test', 'client'].flatMap(filesUnder).map((file) => basename(file)));
    expect({
      unnamed: sources.filter((file) => !named.has(basename(file))),
      missing: [...named].filter((name) => !existing.has(name)),
    }, 'files under src the page does not name, and files it names that exist nowhere').to.deep.equal({ unnamed: [], missing: [] });
  });
});
