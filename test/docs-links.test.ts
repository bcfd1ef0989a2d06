import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The repository explains itself: every relative link in its Markdown leads to a file in it, and
 * no file names documents that only exist outside it (docs/README.md).
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', '.git']);

/** Built from pieces, so that this file does not name what it looks for. */
const FORBIDDEN = [
  ['..', '/shared'],
  ['/work', '/shared'],
  ['decisions.md', ' section'],
  ['spec', ' section'],
  ['STACK', '-NOTES'],
  ['STYLE', '.md'],
  ['partner-catalog-api', '.md'],
].map((parts) => parts.join(''));

/** Every file under `path` (a file or a folder, relative to the root), as root-relative paths. */
function filesUnder(path: string): string[] {
  const absolute = join(ROOT, path);
  if (!existsSync(absolute)) return [];
  if (!statSync(absolute).isDirectory()) return [path];
  return readdirSync(absolute, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory() && SKIPPED_DIRECTORIES.has(entry.name)) return [];
    return filesUnder(join(path, entry.name));
  });
}

function markdownFiles(): string[] {
  return ['README.md', 'client/README.md', ...filesUnder('docs').filter((file) => file.endsWith('.md'))]
    .filter((file) => existsSync(join(ROOT, file)));
}

/** The text outside fenced code blocks and inline code, where a bracket is not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Inline links `[text](target)` and reference definitions `[label]: target`. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!);
  const references = [...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((match) => match[1]!);
  return [...inline, ...references];
}

function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

/** GitHub's anchors for a Markdown file's headings. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const text = markdown.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '');
  for (const match of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = match[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n += 1) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

interface BrokenLink {
  readonly file: string;
  readonly target: string;
  readonly why: string;
}

function brokenLinks(): BrokenLink[] {
  const broken: BrokenLink[] = [];
  for (const file of markdownFiles()) {
    for (const target of linkTargets(readFileSync(join(ROOT, file), 'utf8'))) {
      if (isExternal(target)) continue;
      const [path = '', fragment] = target.split('#', 2);
      const resolved = path === '' ? join(ROOT, file) : resolve(ROOT, dirname(file), decodeURIComponent(path));
      const inRepository = relative(ROOT, resolved);
      if (inRepository.startsWith('..') || isAbsolute(inRepository)) {
        broken.push({ file, target, why: 'leads outside the repository' });
      } else if (!existsSync(resolved)) {
        broken.push({ file, target, why: `no such file: ${inRepository}` });
      } else if (fragment !== undefined && fragment !== '' && resolved.endsWith('.md') && !anchorsOf(readFileSync(resolved, 'utf8')).has(fragment)) {
        broken.push({ file, target, why: `no heading #${fragment} in ${inRepository}` });
      }
    }
  }
  return broken;
}

describe('documentation links', function () {
  it('finds the Markdown it checks, and links in it', function () {
    const files = markdownFiles();
    expect(files).to.include.members(['README.md', join('docs', 'README.md'), join('docs', 'api.md')]);
    expect(files.flatMap((file) => linkTargets(readFileSync(join(ROOT, file), 'utf8')))).to.not.be.empty;
  });

  it('has every relative link in README.md, client/README.md and docs/ lead to a file, and a heading, in the repository', function () {
    expect(brokenLinks()).to.deep.equal([]);
  });

  it('names no document that lives outside the repository', function () {
    const files = ['src', 'test', 'bench', 'scripts', 'client/src', 'client/README.md', 'docs', 'README.md', '.dependency-cruiser.cjs', '.env.example']
      .flatMap(filesUnder);
    expect(files.length).to.be.greaterThan(50);
    const mentions = files.flatMap((file) => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      return text.split('\n').flatMap((line, i) =>
        FORBIDDEN.filter((needle) => line.includes(needle)).map((needle) => `${file}:${i + 1}: ${needle}`));
    });
    expect(mentions).to.deep.equal([]);
  });
});
