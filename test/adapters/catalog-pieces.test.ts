import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { catalogFilePieces } from '../../src/adapters/catalog-file/catalog-pieces.js';
import { CatalogSourceReader, piecesOfDocument, type CatalogPiece } from '../../src/domain/catalog-source.js';
import { fixtureDocument } from '../fixtures/catalog-fixture.js';
import { catalogWithBom, defectiveCatalogs } from '../fixtures/defective-catalogs.js';

const dir = mkdtempSync(join(tmpdir(), 'pcat-pieces-'));

/** Every problem a file's pieces give the rules' reader, as every command reads a file. */
async function problemsOfFile(bytes: Buffer, readBytes: number): Promise<readonly string[]> {
  const file = join(dir, `defect-${readBytes}.json`);
  writeFileSync(file, bytes);
  const reader = new CatalogSourceReader();
  for await (const group of catalogFilePieces(file, { readBytes })) for (const piece of group) reader.read(piece);
  return reader.finish();
}

async function piecesOfFile(text: string | Buffer, readBytes: number): Promise<CatalogPiece[]> {
  const file = join(dir, `catalog-${readBytes}.json`);
  writeFileSync(file, text);
  const pieces: CatalogPiece[] = [];
  for await (const group of catalogFilePieces(file, { readBytes })) pieces.push(...group);
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

  for (const readBytes of [7, 1 << 20]) {
    describe(`read ${readBytes} bytes at a time`, function () {
      for (const { defect, bytes, problem } of defectiveCatalogs()) {
        // A megabyte read 7 bytes at a time is 150,000 reads: 8 s of CPU on a quiet machine, past the
        // test's timeout on a loaded one. Read in 4,099-byte pieces, it still meets some 250 read
        // boundaries inside the long string, none of them aligned.
        const pieceBytes = bytes.length > 100_000 ? Math.max(readBytes, 4_099) : readBytes;
        it(`refuses ${defect}, naming its place${pieceBytes === readBytes ? '' : ` (read ${pieceBytes} bytes at a time)`}`, async function () {
          expect(await problemsOfFile(bytes, pieceBytes)).to.deep.equal([problem]);
        });
      }

      it('places a syntax error at its byte, with the path there', async function () {
        const bad = JSON.stringify(fixtureDocument()).replace('"status":"active"', '"status" "active"');
        const at = Buffer.byteLength(bad.slice(0, bad.indexOf('"status" "active"') + '"status" '.length));
        const column = Array.from(bad.slice(0, bad.indexOf('"status" "active"') + '"status" '.length)).length + 1;
        expect(await problemsOfFile(Buffer.from(bad), readBytes)).to.deep.equal([
          `partners[0].products[0].status: not valid JSON at byte ${at}, line 1, column ${column} (Parser cannot parse input: expected ':')`,
        ]);
      });

      it('gives the line and column of a fault beside its byte, both from 1, the column in characters, on CRLF lines too', async function () {
        // "é€😀" before the fault: 9 bytes, 3 characters.
        const lines = ['{', '  "format": "partner-catalog/v1",', '  "partners": [{ "id": "é€😀" "name": "x" }]', '}'];
        const faults = async (bytes: Buffer): Promise<string[]> => (await piecesOfFile(bytes, readBytes))
          .flatMap((piece) => piece.kind === 'unreadable' ? [`${piece.path}: ${piece.message}`] : []);
        for (const lineBreak of ['\n', '\r\n']) {
          const at = Buffer.from(lines.join(lineBreak)).indexOf('"name"');
          expect(await faults(Buffer.from(lines.join(lineBreak))), JSON.stringify(lineBreak)).to.deep.equal([
            `partners[0].id: not valid JSON at byte ${at}, line 3, column 30 (Parser cannot parse input: expected ',')`,
          ]);
          const bad = Buffer.concat([Buffer.from(lines.slice(0, 2).join(lineBreak) + lineBreak + '  "partners": [{ "id": "é'), Buffer.from([0xff]), Buffer.from('" }]}')]);
          expect(await faults(bad), JSON.stringify(lineBreak)).to.deep.equal([
            `partners[0].id: not valid UTF-8 at byte ${bad.indexOf(0xff)}, line 3, column ${'  "partners": [{ "id": "é'.length + 1} (0xff)`,
          ]);
        }
      });

      it('refuses an empty file, and one in UTF-16, at byte 0', async function () {
        expect(await problemsOfFile(Buffer.alloc(0), readBytes)).to.deep.equal(['$: the file ends at byte 0, before its JSON does (is it cut short?)']);
        const utf16 = Buffer.from(`\ufeff${JSON.stringify(fixtureDocument())}`, 'utf16le');
        expect(await problemsOfFile(utf16, readBytes)).to.deep.equal(['$: not valid UTF-8 at byte 0, line 1, column 1 (0xff): is the file UTF-16? Save it as UTF-8']);
      });

      it('refuses bytes that cannot begin a UTF-8 character as not UTF-8, where a read ends too', async function () {
        const text = JSON.stringify(fixtureDocument());
        // 0xf0 0x80 begins no character (a four-byte one's second byte is 0x90 to 0xbf): the file does not merely end early.
        const bad = Buffer.concat([Buffer.from(text.slice(0, 100)), Buffer.from([0xf0, 0x80])]);
        expect(await problemsOfFile(bad, readBytes)).to.deep.equal(['partners[0].api_keys[0].id: not valid UTF-8 at byte 100, line 1, column 101 (0xf0)']);
        const surrogate = Buffer.concat([Buffer.from(text.slice(0, 100)), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(text.slice(100))]);
        expect(await problemsOfFile(surrogate, readBytes)).to.deep.equal(['partners[0].api_keys[0].id: not valid UTF-8 at byte 100, line 1, column 101 (0xed)']);
      });

      it('refuses a file that ends inside a UTF-8 character', async function () {
        const text = JSON.stringify(fixtureDocument());
        const cut = Buffer.concat([Buffer.from(text.slice(0, 100)), Buffer.from('€').subarray(0, 2)]);
        expect(await problemsOfFile(cut, readBytes)).to.deep.equal(['partners[0].api_keys[0].id: the file ends at byte 102, inside a UTF-8 character begun at byte 100']);
      });
    });
  }

  for (const readBytes of [1, 2, 1 << 20]) {
    it(`skips a byte order mark opening the file, read ${readBytes} byte${readBytes === 1 ? '' : 's'} at a time`, async function () {
      expect(await piecesOfFile(catalogWithBom(), readBytes)).to.deep.equal([...piecesOfDocument(fixtureDocument())]);
    });
  }

  it('refuses a file it cannot open, naming it', async function () {
    let refused: unknown;
    try {
      for await (const group of catalogFilePieces(join(dir, 'missing.json'))) expect(group).to.equal(undefined);
    } catch (error) {
      refused = error;
    }
    expect(String(refused)).to.match(/cannot read catalog file .*missing\.json: no such file \(ENOENT\)$/);
  });
});
