import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { catalogFilePieces } from '../../src/adapters/catalog-file/catalog-pieces.js';
import { piecesOfDocument, type CatalogPiece } from '../../src/domain/catalog-source.js';
import { fixtureDocument } from '../fixtures/catalog-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'pcat-pieces-'));

async function piecesOfFile(text: string, readBytes: number): Promise<CatalogPiece[]> {
  const file = join(dir, `catalog-${readBytes}.json`);
  writeFileSync(file, text);
  const pieces: CatalogPiece[] = [];
  for await (const group of catalogFilePieces(file, readBytes)) pieces.push(...group);
  return pieces;
}

describe('catalog file pieces', function () {
  const document = fixtureDocument() as { partners: { name: string; products: Record<string, unknown>[] }[] };
  document.partners[0]!.name = 'Açme 😀 Outdoor';
  document.partners[0]!.products[0]!.title = 'Tente « deux » 🏕';
  const text = JSON.stringify(document, null, 1).replace('"sku": "abc-1"', '"__proto__": {"x": 1e3}, "sku": "abc-1"');

  for (const readBytes of [1, 7, 1 << 20]) {
    it(`hands on the pieces of the parsed document, read ${readBytes} byte${readBytes === 1 ? '' : 's'} at a time`, async function () {
      const pieces = await piecesOfFile(text, readBytes);
      expect(pieces).to.deep.equal([...piecesOfDocument(JSON.parse(text))]);
      const proto = pieces.find((p) => p.kind === 'product' && Object.hasOwn(p.value as object, '__proto__'));
      expect(Object.getPrototypeOf((proto as { value: object }).value)).to.equal(Object.prototype);
    });
  }

  it('ends with the place the text stopped being JSON, after the pieces before it', async function () {
    const pieces = await piecesOfFile(text.slice(0, text.indexOf('"abc-1"') + 3), 64);
    expect(pieces.filter((p) => p.kind === 'product')).to.have.length(1);
    expect(pieces.at(-1)).to.include({ kind: 'unreadable', path: 'partners[0].products[1].sku' });
  });

  it('refuses a file it cannot open, naming it', async function () {
    let refused: unknown;
    try {
      for await (const group of catalogFilePieces(join(dir, 'missing.json'))) expect(group).to.equal(undefined);
    } catch (error) {
      refused = error;
    }
    expect(String(refused)).to.match(/cannot read catalog file .*missing\.json: ENOENT/);
  });
});
