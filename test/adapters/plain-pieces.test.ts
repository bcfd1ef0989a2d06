import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { catalogFilePieces } from '../../src/adapters/catalog-file/catalog-pieces.js';
import { PlainPieceReader } from '../../src/adapters/catalog-file/plain-pieces.js';
import { MAX_STRING_LENGTH, piecesOfDocument, type CatalogPiece } from '../../src/domain/catalog-source.js';
import { seededRandom } from '../support/seeded-random.js';

const dir = mkdtempSync(join(tmpdir(), 'pcat-plain-'));

/** The plain reader's pieces of the text fed in pieces of the given sizes, in turn; null if it declines the text. */
function plainPieces(text: string, sizes: readonly number[]): CatalogPiece[] | null {
  const reader = new PlainPieceReader();
  const pieces: CatalogPiece[] = [];
  for (let at = 0, i = 0; at < text.length; i += 1) {
    const size = sizes[i % sizes.length]!;
    if (!reader.feed(reader.untaken() + text.slice(at, at + size))) return null;
    pieces.push(...reader.pieces.splice(0));
    at += size;
  }
  if (!reader.end()) return null;
  return [...pieces, ...reader.pieces];
}

async function filePieces(text: string, readBytes: number): Promise<CatalogPiece[]> {
  const file = join(dir, `catalog-${readBytes}.json`);
  writeFileSync(file, text);
  const pieces: CatalogPiece[] = [];
  for await (const group of catalogFilePieces(file, { readBytes })) pieces.push(...group);
  return pieces;
}

/** A JSON value of any kind, nested a few levels: strings with escapes and characters past the BMP, numbers of every form, `__proto__` keys. */
function randomValue(next: () => number, depth: number): unknown {
  const roll = next();
  if (depth > 3 || roll < 0.45) {
    const kind = Math.floor(next() * 6);
    if (kind === 0) return ['', 'plain', 'quote " and \\ backslash', 'tab\tnewline\nnul\u0000', 'é 😀 « »', '\u2028\u2029', '\\"'][Math.floor(next() * 7)];
    if (kind === 1) return [0, -0, 1, -17, 3.25, 1e21, -2.5e-7, Number.MAX_SAFE_INTEGER][Math.floor(next() * 8)];
    if (kind === 2) return next() < 0.5;
    if (kind === 3) return null;
    return `s${Math.floor(next() * 1e6)}`;
  }
  if (roll < 0.7) return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
  const object: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 5); i > 0; i -= 1) {
    const key = ['sku', 'title', '__proto__', 'a"b', 'ключ', '', `k${i}`, 'x\\y'][Math.floor(next() * 8)]!;
    Object.defineProperty(object, key, { value: randomValue(next, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return object;
}

/** A document of the catalog's shape (and sometimes not quite: a partner that is not an object, products that are not an array). */
function randomCatalog(next: () => number): unknown {
  const partners = Array.from({ length: Math.floor(next() * 4) }, () => {
    if (next() < 0.1) return randomValue(next, 2);
    const partner: Record<string, unknown> = { id: `p${Math.floor(next() * 100)}`, name: randomValue(next, 3) };
    partner.products = next() < 0.1 ? randomValue(next, 3) : Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, 1));
    if (next() < 0.5) partner.api_keys = randomValue(next, 2);
    return partner;
  });
  const document: Record<string, unknown> = next() < 0.5 ? { format: 'partner-catalog/v1', partners } : { partners, format: 'partner-catalog/v1' };
  if (next() < 0.3) document.extra = randomValue(next, 1);
  return document;
}

describe('plain catalog file reader', function () {
  it('hands on the pieces the careful reader would, however the text is spaced and cut', function () {
    const next = seededRandom(11);
    for (let round = 0; round < 400; round += 1) {
      const document = round % 50 === 0 ? randomValue(next, 0) : randomCatalog(next);
      const indent = [0, 1, 2, '\t'][round % 4]!;
      let text = JSON.stringify(document, null, indent);
      // Newlines in the text are whitespace (JSON.stringify escapes those in strings): any of JSON's four will do.
      if (round % 3 === 0) text = text.replace(/\n/g, '\r\n');
      text = `${round % 5 === 0 ? ' \n' : ''}${text}${round % 7 === 0 ? '\n\t ' : ''}`;
      const expected = [...piecesOfDocument(JSON.parse(text))];
      for (const sizes of [[text.length], [1], [7, 3, 64], [Math.ceil(next() * 40)]]) {
        expect(plainPieces(text, sizes), `round ${round}, fed ${sizes.join(', ')} at a time: ${text.slice(0, 200)}`).to.deep.equal(expected);
      }
    }
  });

  it('declines what the careful reader would refuse, or may (and the file is then read carefully)', async function () {
    const long = 'x'.repeat(MAX_STRING_LENGTH + 1);
    const declined: Record<string, string> = {
      'a key given twice at the top': '{"partners":[],"partners":[]}',
      'a key given twice in a partner': '{"partners":[{"id":"a","id":"b"}]}',
      'a key given twice in a product, deep down': '{"partners":[{"products":[{"a":[{"b":1,"b":2}]}]}]}',
      'a key given twice, written two ways': '{"partners":[{"products":[{"ab":1,"a\\u0062":2}]}]}',
      'a control character in a key': '{"part\tners":[]}',
      'a comma before a closing bracket': '{"partners":[{"products":[1,]}]}',
      'a comma before a closing brace': '{"partners":[],}',
      'a missing comma': '{"partners":[{} {}]}',
      'a missing colon': '{"partners" []}',
      'text after the document': '{"partners":[]} x',
      'a second document': '{"partners":[]}{}',
      'a document cut short': '{"partners":[{"id":"a"',
      'a word cut short': '{"partners":[tru',
      'a form feed between members': '{"partners":[]\f}',
      'a single quote': "{'partners':[]}",
      'a string longer than the bound': `{"partners":[{"name":"${long}"}]}`,
      'a key longer than the bound': `{"${long}":1}`,
      'a number longer than the bound': `{"partners":[{"products":[${'1'.repeat(MAX_STRING_LENGTH + 1)}]}]}`,
      'an empty text': '',
    };
    for (const [what, text] of Object.entries(declined)) {
      expect(plainPieces(text, [text.length]), what).to.equal(null);
      // A value is looked at from its start again with each text fed while it is unfinished: a megabyte is fed in larger pieces.
      const size = text.length > MAX_STRING_LENGTH ? 65_536 : 5;
      expect(plainPieces(text, [size]), `${what}, fed ${size} at a time`).to.equal(null);
      const pieces = await filePieces(text, 1 << 20);
      expect(pieces.some((piece) => piece.kind === 'problem' || piece.kind === 'unreadable'), `${what}: refused by the careful reader`).to.equal(true);
    }
  });

  it('hands on each piece once when the careful reader takes over after many were handed on', async function () {
    const partners = Array.from({ length: 5 }, (_, p) => ({ id: `p${p}`, name: `Partner ${p}`, products: Array.from({ length: 4 }, (_, i) => ({ sku: `s${p}-${i}`, title: `T ${i}` })) }));
    const text = JSON.stringify({ format: 'partner-catalog/v1', partners }, null, 1).replace('"sku": "s3-2"', '"sku": "s3-2", "sku": "again"');
    for (const readBytes of [64, 1 << 20]) {
      const pieces = await filePieces(text, readBytes);
      expect(pieces.filter((piece) => piece.kind !== 'problem'), `read ${readBytes} bytes at a time`).to.deep.equal([...piecesOfDocument(JSON.parse(text))]);
      expect(pieces.filter((piece) => piece.kind === 'problem')).to.deep.equal([
        { kind: 'problem', path: 'partners[3].products[2].sku', message: 'is a duplicate key: an object may name each key once' },
      ]);
    }
  });
});
