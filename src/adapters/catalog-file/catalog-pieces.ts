import { createReadStream } from 'node:fs';
import { getManyValues, isMany, none } from 'stream-chain/defs.js';
import { jsonParser } from 'stream-json/core/parser.js';
import type { CatalogPiece } from '../../domain/catalog-source.js';

type Token =
  | { readonly name: 'startObject' | 'endObject' | 'startArray' | 'endArray' }
  | { readonly name: 'keyValue' | 'stringValue' | 'numberValue'; readonly value: string }
  | { readonly name: 'nullValue'; readonly value: null }
  | { readonly name: 'trueValue' | 'falseValue'; readonly value: boolean };

/**
 * Reads a catalog file as a stream, 1 MB at a time through stream-json's tokenizer, handing on
 * the pieces each read completed: a product at a time, never the whole file. A syntax error ends
 * the pieces with one that says what the tokenizer expected.
 */
export async function* catalogFilePieces(path: string | URL, readBytes = 1 << 20): AsyncGenerator<CatalogPiece[]> {
  const file = createReadStream(path, { highWaterMark: readBytes, encoding: 'utf8' });
  // Called with text per read, and with `none` at the end to flush a number the text ended on.
  const tokenize = jsonParser({ streamValues: false }) as (input: string | typeof none) => unknown;
  const splitter = new PieceSplitter();
  const take = (result: unknown): void => {
    if (isMany(result)) for (const token of getManyValues(result)) splitter.token(token as Token);
  };
  try {
    // The tokenizer itself, called per read: no stream stage, no await per token.
    for await (const text of file) {
      try {
        take(tokenize(text as string));
      } catch (error) {
        splitter.pieces.push({ kind: 'syntaxError', message: error instanceof Error ? error.message : String(error) });
        break;
      }
      if (splitter.pieces.length > 0) yield splitter.pieces.splice(0);
    }
    take(tokenize(none));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === undefined) {
      splitter.pieces.push({ kind: 'syntaxError', message: error instanceof Error ? error.message : String(error) });
    } else throw new Error(`cannot read catalog file ${String(path)}: ${(error as NodeJS.ErrnoException).code}`);
  } finally {
    file.destroy();
  }
  if (splitter.pieces.length > 0) yield splitter.pieces;
}

/** A container the splitter walks through without assembling it. */
type Frame =
  | { readonly role: 'root'; key: string }
  | { readonly role: 'partners'; count: number }
  | { readonly role: 'partner'; readonly index: number; key: string }
  | { readonly role: 'products'; readonly partner: number; count: number };

/** Turns tokens into pieces: walks the document down to a product, and assembles whatever lies below. */
class PieceSplitter {
  readonly pieces: CatalogPiece[] = [];
  private readonly frames: Frame[] = [];
  private assembling: { readonly value: ValueAssembler; readonly done: (value: unknown) => void } | null = null;

  token(token: Token): void {
    if (this.assembling !== null) {
      if (this.assembling.value.token(token)) {
        const { value, done } = this.assembling;
        this.assembling = null;
        done(value.result);
      }
      return;
    }
    const frame = this.frames.at(-1);
    if (frame === undefined) {
      if (token.name === 'startObject') this.frames.push({ role: 'root', key: '' });
      else this.assemble(token, (value) => this.pieces.push({ kind: 'document', value }));
      return;
    }
    switch (frame.role) {
      case 'root':
        if (token.name === 'keyValue') frame.key = token.value;
        else if (token.name === 'endObject') this.frames.pop();
        else if (frame.key === 'partners' && token.name === 'startArray') {
          this.frames.push({ role: 'partners', count: 0 });
          this.pieces.push({ kind: 'partners' });
        } else {
          const key = frame.key;
          this.assemble(token, (value) => this.pieces.push({ kind: 'field', key, value }));
        }
        return;
      case 'partners': {
        if (token.name === 'endArray') {
          this.frames.pop();
          return;
        }
        const index = frame.count++;
        if (token.name === 'startObject') {
          this.frames.push({ role: 'partner', index, key: '' });
          this.pieces.push({ kind: 'partnerStart', index });
        } else this.assemble(token, (value) => this.pieces.push({ kind: 'partner', index, value }));
        return;
      }
      case 'partner': {
        const index = frame.index;
        if (token.name === 'keyValue') frame.key = token.value;
        else if (token.name === 'endObject') {
          this.frames.pop();
          this.pieces.push({ kind: 'partnerEnd', index });
        } else if (frame.key === 'products' && token.name === 'startArray') {
          this.frames.push({ role: 'products', partner: index, count: 0 });
          this.pieces.push({ kind: 'products', index });
        } else {
          const key = frame.key;
          this.assemble(token, (value) => this.pieces.push({ kind: 'partnerField', index, key, value }));
        }
        return;
      }
      case 'products': {
        if (token.name === 'endArray') {
          this.frames.pop();
          return;
        }
        const partner = frame.partner;
        const index = frame.count++;
        this.assemble(token, (value) => this.pieces.push({ kind: 'product', partner, index, value }));
        return;
      }
    }
  }

  private assemble(first: Token, done: (value: unknown) => void): void {
    const value = new ValueAssembler();
    if (value.token(first)) done(value.result);
    else this.assembling = { value, done };
  }
}

type Container = unknown[] | Record<string, unknown>;

/** Builds one JSON value from its tokens, as `JSON.parse` would (a `__proto__` key is an own property). */
class ValueAssembler {
  result: unknown;
  private readonly stack: Container[] = [];
  private readonly keys: string[] = [];

  /** Takes a token; true once the value is complete. */
  token(token: Token): boolean {
    switch (token.name) {
      case 'startObject':
        return this.open({});
      case 'startArray':
        return this.open([]);
      case 'endObject':
      case 'endArray':
        return this.close();
      case 'keyValue':
        this.keys[this.stack.length - 1] = token.value;
        return false;
      case 'numberValue':
        return this.add(Number(token.value));
      default:
        return this.add(token.value);
    }
  }

  private open(container: Container): boolean {
    this.stack.push(container);
    return false;
  }

  private close(): boolean {
    const container = this.stack.pop();
    return this.add(container);
  }

  private add(value: unknown): boolean {
    const parent = this.stack.at(-1);
    if (parent === undefined) {
      this.result = value;
      return true;
    }
    if (Array.isArray(parent)) parent.push(value);
    else {
      const key = this.keys[this.stack.length - 1]!;
      if (key === '__proto__') Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
      else parent[key] = value;
    }
    return false;
  }
}
