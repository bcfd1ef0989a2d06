import { createReadStream } from 'node:fs';
import { getManyValues, isMany, none } from 'stream-chain/defs.js';
import { jsonParser } from 'stream-json/core/parser.js';
import { MAX_STRING_LENGTH, type CatalogPiece } from '../../domain/catalog-source.js';
import { reasonOf } from '../../domain/failure-reason.js';
import { invalidUtf8, Utf8Reads } from './utf8-reads.js';

/** The tokens the splitter takes: every key, string and number whole. */
type Token =
  | { readonly name: 'startObject' | 'endObject' | 'startArray' | 'endArray' }
  | { readonly name: 'keyValue' | 'stringValue' | 'numberValue'; readonly value: string }
  | { readonly name: 'nullValue'; readonly value: null }
  | { readonly name: 'trueValue' | 'falseValue'; readonly value: boolean };

/** The tokenizer's own: keys, strings and numbers in chunks, so none is held past the bound. */
type Streamed =
  | { readonly name: 'startObject' | 'endObject' | 'startArray' | 'endArray' }
  | { readonly name: 'startKey' | 'endKey' | 'startString' | 'endString' | 'startNumber' | 'endNumber' }
  | { readonly name: 'stringChunk' | 'numberChunk'; readonly value: string }
  | { readonly name: 'nullValue'; readonly value: null }
  | { readonly name: 'trueValue' | 'falseValue'; readonly value: boolean };

/** Characters handed to the tokenizer at once: the slice a syntax error is in is read again a character at a time. */
const SLICE = 4_096;

/** The careful reader: stream-json's tokenizer, a token at a time, naming every problem where it is. */
export async function* carefulPieces(path: string | URL, options: { readonly readBytes?: number; readonly onRead?: (bytes: number) => void }): AsyncGenerator<CatalogPiece[]> {
  const file = createReadStream(path, { highWaterMark: options.readBytes ?? 1 << 20 });
  // Called with text per slice, and with `none` at the end to flush a number the text ended on.
  const tokenize = jsonParser({ packValues: false, streamValues: true }) as (input: string | typeof none) => unknown;
  const splitter = new PieceSplitter();
  const walker = new TokenWalker(splitter);
  const reads = new Utf8Reads();
  const take = (text: string | typeof none): void => {
    const result = tokenize(text);
    if (isMany(result)) for (const token of getManyValues(result)) walker.token(token as Streamed);
  };
  /** Tokenizes the text in slices; the slice the text stopped being JSON in, if it did. */
  const feed = (text: string, firstByte: number): SyntaxFault | null => {
    for (let at = 0; at < text.length; at += SLICE) {
      try {
        take(text.slice(at, at + SLICE));
      } catch (error) {
        return { from: firstByte + Buffer.byteLength(text.slice(0, at)), text: text.slice(at, at + SLICE), reason: reasonOf(error) };
      }
    }
    return null;
  };
  /** The whole file is read: it must not end inside a character or a JSON value. */
  const end = (): void => {
    const { offset, pending } = reads;
    if (pending > 0) walker.unreadable(`the file ends at byte ${offset}, inside a UTF-8 character begun at byte ${offset - pending}`);
    else {
      try {
        take(none);
      } catch {
        walker.unreadable(`the file ends at byte ${offset}, before its JSON does (is it cut short?)`);
      }
    }
  };
  let fault: SyntaxFault | null = null;
  try {
    let readable = true;
    for await (const chunk of file) {
      const read = reads.next(chunk as Buffer);
      fault = feed(read.text, read.firstByte);
      if ('badAt' in read) {
        if (fault === null) walker.unreadable(invalidUtf8(read.badAt, read.bad, await lineAndColumn(path, read.badAt)));
        readable = false;
        break;
      }
      options.onRead?.(reads.offset);
      if (fault !== null) {
        readable = false;
        break;
      }
      if (splitter.pieces.length > 0) yield splitter.pieces.splice(0);
    }
    if (readable) end();
    if (fault !== null) {
      const found = await locate(path, fault);
      const place = await lineAndColumn(path, found.at);
      splitter.pieces.push({ kind: 'unreadable', path: found.path, message: `not valid JSON at byte ${found.at}, ${place} (${fault.reason})` });
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(`cannot read catalog file ${String(path)}: ${code === undefined ? reasonOf(error) : `${FILE_ERRORS[code] ?? 'the system refused'} (${code})`}`);
  } finally {
    file.destroy();
  }
  if (splitter.pieces.length > 0) yield splitter.pieces;
}

/** The slice of text the tokenizer refused, from its first byte, and why. */
interface SyntaxFault {
  readonly from: number;
  readonly text: string;
  readonly reason: string;
}

/**
 * Where exactly the text stopped being JSON, and the path there. The tokenizer tells only that a
 * slice held the fault, and keeps no state to resume from: so a fresh one reads the file again up
 * to that slice, then the slice a character at a time. Only a refused file pays for it.
 */
async function locate(path: string | URL, fault: SyntaxFault): Promise<{ at: number; path: string }> {
  const tokenize = jsonParser({ packValues: false, streamValues: true }) as (input: string) => unknown;
  const walker = new TokenWalker(new PieceSplitter());
  const take = (text: string): void => {
    const result = tokenize(text);
    if (isMany(result)) for (const token of getManyValues(result)) walker.token(token as Streamed);
  };
  if (fault.from > 0) {
    const decoder = new TextDecoder('utf-8');
    for await (const bytes of createReadStream(path, { end: fault.from - 1 })) {
      const text = decoder.decode(bytes as Buffer, { stream: true });
      for (let at = 0; at < text.length; at += SLICE) take(text.slice(at, at + SLICE));
    }
  }
  let at = fault.from;
  for (const character of fault.text) {
    try {
      take(character);
    } catch {
      return { at, path: walker.currentPath() };
    }
    at += Buffer.byteLength(character);
  }
  return { at: fault.from, path: walker.currentPath() };
}

/**
 * "line L, column C" of a byte, both from 1, the column in characters: what an editor goes to, where
 * a byte offset is what a program goes to. The file is read again up to the byte, so only a refused
 * file pays; the bytes before a fault are valid UTF-8, and a byte order mark is no character.
 */
async function lineAndColumn(path: string | URL, at: number): Promise<string> {
  let line = 1;
  let column = 1;
  if (at > 0) {
    const decoder = new TextDecoder('utf-8');
    for await (const bytes of createReadStream(path, { end: at - 1 })) {
      const text = decoder.decode(bytes as Buffer, { stream: true });
      const lastBreak = text.lastIndexOf('\n');
      if (lastBreak >= 0) {
        for (let found = text.indexOf('\n'); found >= 0; found = text.indexOf('\n', found + 1)) line++;
        column = 1;
      }
      column += characters(text.slice(lastBreak + 1));
    }
  }
  return `line ${line}, column ${column}`;
}

/** Characters (code points) in a text decoded from UTF-8: its UTF-16 units, less one per surrogate pair. */
function characters(text: string): number {
  let pairs = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) pairs++;
  }
  return text.length - pairs;
}

/** What the usual reasons a file cannot be read mean, in words. */
const FILE_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EACCES: 'this process may not read it',
  EPERM: 'this process may not read it',
  EISDIR: 'it is a directory, not a file',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many symbolic links',
  EMFILE: 'this process has too many files open',
};

const count = (n: number): string => n.toLocaleString('en-US');


/** A container on the way down: an object with the keys it has named, or an array and its element's index. */
interface Level {
  readonly keys: Set<string> | null;
  key: string;
  index: number;
}

/**
 * Walks the tokenizer's tokens keeping the JSON path: refuses a key named twice in one object,
 * and any key, string or number past the bound, and hands whole tokens on to the splitter.
 */
class TokenWalker {
  private readonly levels: Level[] = [];
  /** The key, string or number being read, its length, and its text while within the bound. */
  private text = '';
  private length = 0;
  private values = 0;

  constructor(private readonly splitter: PieceSplitter) {}

  get depth(): number {
    return this.levels.length;
  }

  /** Whether no value has begun: an empty file is cut short too. */
  get empty(): boolean {
    return this.values === 0;
  }

  token(token: Streamed): void {
    switch (token.name) {
      case 'startObject':
      case 'startArray':
        this.element();
        this.levels.push({ keys: token.name === 'startObject' ? new Set() : null, key: '', index: -1 });
        this.splitter.token(token);
        return;
      case 'endObject':
      case 'endArray':
        this.levels.pop();
        this.splitter.token(token);
        return;
      case 'startString':
      case 'startNumber':
        this.element();
        this.text = '';
        this.length = 0;
        return;
      case 'startKey':
        this.text = '';
        this.length = 0;
        return;
      case 'stringChunk':
      case 'numberChunk':
        this.length += token.value.length;
        if (this.length <= MAX_STRING_LENGTH) this.text += token.value;
        return;
      case 'endKey':
        this.key();
        return;
      case 'endString':
        this.splitter.token({ name: 'stringValue', value: this.bounded('a string') });
        return;
      case 'endNumber':
        this.splitter.token({ name: 'numberValue', value: this.bounded('a number') || '0' });
        return;
      default:
        this.element();
        this.splitter.token(token);
    }
  }

  /** The text stopped being readable here: the last piece, with the path reading had reached. */
  unreadable(message: string): void {
    this.splitter.pieces.push({ kind: 'unreadable', path: this.currentPath(), message });
  }

  /** A value begins: in an array, the next element. */
  private element(): void {
    this.values += 1;
    const level = this.levels.at(-1);
    if (level !== undefined && level.keys === null) level.index += 1;
  }

  private key(): void {
    const level = this.levels.at(-1)!;
    const key = this.text;
    if (this.length > MAX_STRING_LENGTH) {
      level.key = `${key.slice(0, 40)}…`;
      this.problem(`is a key of ${count(this.length)} characters; at most ${count(MAX_STRING_LENGTH)} are allowed`);
    } else {
      level.key = key;
      if (level.keys!.has(key)) this.problem('is a duplicate key: an object may name each key once');
      level.keys!.add(key);
    }
    this.text = '';
    this.splitter.token({ name: 'keyValue', value: level.key });
  }

  /** The text just read; past the bound, a problem at its path and an empty value in its place. */
  private bounded(what: string): string {
    const text = this.text;
    this.text = '';
    if (this.length <= MAX_STRING_LENGTH) return text;
    this.problem(`is ${what} of ${count(this.length)} characters; at most ${count(MAX_STRING_LENGTH)} are allowed`);
    return '';
  }

  private problem(message: string): void {
    this.splitter.pieces.push({ kind: 'problem', path: this.currentPath(), message });
  }

  /** Where the walk is: the key or element being read, as the rules name it (`partners[0].products[3].sku`). */
  currentPath(): string {
    let path = '';
    for (const level of this.levels) {
      if (level.keys === null) path += `[${Math.max(level.index, 0)}]`;
      else if (level.key !== '' || level.keys.size > 0) path += path === '' ? level.key : `.${level.key}`;
    }
    return path;
  }
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
