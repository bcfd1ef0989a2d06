import { createReadStream } from 'node:fs';
import type { CatalogPiece } from '../../domain/catalog-source.js';
import { carefulPieces } from './careful-pieces.js';
import { PlainPieceReader } from './plain-pieces.js';
import { Utf8Reads } from './utf8-reads.js';

/** What reading a catalog file may be told: bytes per read, and a progress callback. */
export interface CatalogReadOptions {
  readonly readBytes?: number;
  /** Told the bytes read so far after each read, for a progress line; never less than it was told before. */
  readonly onRead?: (bytes: number) => void;
}

/**
 * Reads a catalog file as a stream, 1 MB at a time, handing on the pieces each read completed: a
 * product at a time, never the whole file. Every command reads a file through here, so each
 * refuses a file alike:
 * - bytes that are not UTF-8, at their byte offset (a byte order mark at the start is skipped);
 * - a key given twice in one object, and a key, string or number over MAX_STRING_LENGTH
 *   characters, each by its JSON path (reading goes on, to list every problem);
 * - text that stops being JSON, or ends before the JSON does, where it does.
 * After the first of the last two kinds, nothing more is read.
 *
 * A file is read plainly first (plain-pieces.ts: `JSON.parse` on each product, about three times as
 * fast); at the first thing that reader cannot show is plain, the file is read again from its start
 * by the careful reader (stream-json's tokenizer, a token at a time), which finds the same pieces up
 * to there, hands on only those after them, and says what is wrong. Only a refused file, or one
 * with a product over 16 MB, pays for reading twice.
 */
export async function* catalogFilePieces(path: string | URL, options: CatalogReadOptions = {}): AsyncGenerator<CatalogPiece[]> {
  let reported = 0;
  const onRead = (bytes: number): void => {
    if (bytes <= reported) return;
    reported = bytes;
    options.onRead?.(bytes);
  };
  const reader = new PlainPieceReader();
  let handedOn = 0;
  let plain = true;
  const file = createReadStream(path, { highWaterMark: options.readBytes ?? 1 << 20 });
  try {
    const reads = new Utf8Reads();
    for await (const chunk of file) {
      const read = reads.next(chunk as Buffer);
      if ('badAt' in read || !reader.feed(read.text)) {
        plain = false;
        break;
      }
      reads.again(reader.untaken());
      onRead(reads.offset);
      if (reader.pieces.length > 0) {
        handedOn += reader.pieces.length;
        yield reader.pieces.splice(0);
      }
    }
    plain &&= reads.pending === 0 && reader.end();
  } catch {
    // The careful reader meets the same failure to read, and names it.
    plain = false;
  } finally {
    file.destroy();
  }
  if (plain) {
    if (reader.pieces.length > 0) yield reader.pieces.splice(0);
    return;
  }
  for await (const group of carefulPieces(path, { ...options, onRead })) {
    if (handedOn >= group.length) {
      handedOn -= group.length;
      continue;
    }
    yield handedOn === 0 ? group : group.slice(handedOn);
    handedOn = 0;
  }
}
