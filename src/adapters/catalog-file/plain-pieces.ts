import { MAX_STRING_LENGTH, type CatalogPiece } from '../../domain/catalog-source.js';

/**
 * The most text a plain read holds past the last piece it handed on: a product (or a field) larger
 * than this is left to the careful reader, which holds no value past MAX_STRING_LENGTH.
 */
const MOST_HELD_CHARACTERS = 16 * 1024 * 1024;

/** A step needs text that has not come yet. */
const MORE = -1;
/** The text is not plain: the careful reader decides what is wrong with it, if anything. */
const NOT_PLAIN = -2;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** JSON's four whitespace characters. */
const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
/** Where a number or a literal (`true`, `false`, `null`) ends. */
const endsWord = (c: number): boolean => isSpace(c) || c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || c === COLON;

/** Where an object is in its members: before the first, after a comma, after a member. */
type ObjectAt = 'open' | 'key' | 'next';
/** Where an array is in its elements: before the first, after a comma, after an element. */
type ArrayAt = 'open' | 'element' | 'next';

/** The containers the reader walks through without assembling them (the careful reader's frames). */
type Frame =
  | { readonly role: 'root'; at: ObjectAt; readonly keys: Set<string> }
  | { readonly role: 'partners'; at: ArrayAt; count: number }
  | { readonly role: 'partner'; readonly index: number; at: ObjectAt; readonly keys: Set<string> }
  | { readonly role: 'products'; readonly partner: number; at: ArrayAt; count: number };

/**
 * The fast way through a catalog file that is plain JSON: it walks the document down to a product
 * as the careful reader (catalog-pieces.ts) does and hands on the same pieces, but finds where each
 * value ends with `indexOf` and a loop over character codes, and builds it with `JSON.parse`, which
 * also checks its syntax. It takes a text only when it can show the careful reader would find
 * nothing wrong with it: no key given twice in an object, no key, string or number whose text is
 * longer than MAX_STRING_LENGTH (written, not decoded: so it may decline one the careful reader
 * takes), nothing but JSON's whitespace between the containers it walks, a whole document. At the
 * first thing it cannot show, it says so (`feed` or `end` false) and takes nothing more: the caller
 * reads the file again carefully, which finds the same pieces up to there and says what is wrong.
 * About a third of the careful reader's time on a file of many small products, most of it `JSON.parse`.
 */
export class PlainPieceReader {
  /** Pieces read and not yet handed on. */
  readonly pieces: CatalogPiece[] = [];
  private text = '';
  private at = 0;
  private readonly frames: Frame[] = [];
  private ended = false;

  /**
   * Takes the file's next text, which begins with what the text before left `untaken`; false if it
   * is not plain (then nothing more may be fed). The caller joins the two, as bytes before they are
   * decoded: a string made by `+` is read character by character four times as slowly.
   */
  feed(text: string): boolean {
    this.text = text;
    this.at = 0;
    for (;;) {
      const step = this.step();
      if (step === NOT_PLAIN) return false;
      if (step === MORE) return this.text.length - this.at <= MOST_HELD_CHARACTERS;
    }
  }

  /** The end of the text last fed that no step has taken yet: to be fed again, at the start of the next. */
  untaken(): string {
    return this.text.slice(this.at);
  }

  /** The file has ended: whether it held one whole plain document. */
  end(): boolean {
    // A document that is a number or a literal ends with the text: the word may go on no further.
    if (!this.ended && this.frames.length === 0 && this.spaceFrom(this.at) < this.text.length) {
      try {
        this.pieces.push({ kind: 'document', value: JSON.parse(this.text.slice(this.at)) });
      } catch {
        return false;
      }
      this.ended = true;
      this.at = this.text.length;
    }
    return this.ended && this.spaceFrom(this.at) === this.text.length;
  }

  /** One step down the document: a container opened or closed, a member or element read. */
  private step(): number {
    const frame = this.frames.at(-1);
    if (frame === undefined) return this.ended ? this.afterDocument() : this.document();
    return frame.role === 'root' || frame.role === 'partner' ? this.objectStep(frame) : this.arrayStep(frame);
  }

  private document(): number {
    const at = this.spaceFrom(this.at);
    if (at === this.text.length) return MORE;
    if (this.text.charCodeAt(at) === OPEN_OBJECT) {
      this.frames.push({ role: 'root', at: 'open', keys: new Set() });
      this.at = at + 1;
      return 0;
    }
    return this.value(at, (value) => {
      this.pieces.push({ kind: 'document', value });
      this.ended = true;
    });
  }

  /** Only whitespace may follow the document. */
  private afterDocument(): number {
    this.at = this.spaceFrom(this.at);
    return this.at === this.text.length ? MORE : NOT_PLAIN;
  }

  private objectStep(frame: Extract<Frame, { keys: Set<string> }>): number {
    const at = this.spaceFrom(this.at);
    if (at === this.text.length) return MORE;
    const c = this.text.charCodeAt(at);
    if (frame.at === 'next') {
      if (c === COMMA) {
        frame.at = 'key';
        this.at = at + 1;
        return 0;
      }
      return c === CLOSE_OBJECT ? this.closeObject(frame, at) : NOT_PLAIN;
    }
    if (c === CLOSE_OBJECT && frame.at === 'open') return this.closeObject(frame, at);
    return c === QUOTE ? this.member(frame, at) : NOT_PLAIN;
  }

  /** A member of the root or of a partner: `"key": value`, the value read whole unless it is the array walked into. */
  private member(frame: Extract<Frame, { keys: Set<string> }>, from: number): number {
    const keyEnd = this.stringEnd(from);
    if (keyEnd < 0) return keyEnd;
    const key = this.keyOf(from, keyEnd);
    if (key === null || frame.keys.has(key)) return NOT_PLAIN;
    const colon = this.spaceFrom(keyEnd);
    if (colon === this.text.length) return MORE;
    if (this.text.charCodeAt(colon) !== COLON) return NOT_PLAIN;
    const valueAt = this.spaceFrom(colon + 1);
    if (valueAt === this.text.length) return MORE;
    const walked = frame.role === 'root' ? 'partners' : 'products';
    if (key === walked && this.text.charCodeAt(valueAt) === OPEN_ARRAY) {
      frame.keys.add(key);
      frame.at = 'next';
      if (frame.role === 'root') {
        this.frames.push({ role: 'partners', at: 'open', count: 0 });
        this.pieces.push({ kind: 'partners' });
      } else {
        this.frames.push({ role: 'products', partner: frame.index, at: 'open', count: 0 });
        this.pieces.push({ kind: 'products', index: frame.index });
      }
      this.at = valueAt + 1;
      return 0;
    }
    return this.value(valueAt, (value) => {
      frame.keys.add(key);
      frame.at = 'next';
      this.pieces.push(frame.role === 'root' ? { kind: 'field', key, value } : { kind: 'partnerField', index: frame.index, key, value });
    });
  }

  private closeObject(frame: Extract<Frame, { keys: Set<string> }>, at: number): number {
    this.frames.pop();
    if (frame.role === 'root') this.ended = true;
    else this.pieces.push({ kind: 'partnerEnd', index: frame.index });
    this.at = at + 1;
    return 0;
  }

  private arrayStep(frame: Extract<Frame, { count: number }>): number {
    const at = this.spaceFrom(this.at);
    if (at === this.text.length) return MORE;
    const c = this.text.charCodeAt(at);
    if (frame.at === 'next') {
      if (c === COMMA) {
        frame.at = 'element';
        this.at = at + 1;
        return 0;
      }
      if (c !== CLOSE_ARRAY) return NOT_PLAIN;
    }
    if (c === CLOSE_ARRAY) {
      if (frame.at === 'element') return NOT_PLAIN;
      this.frames.pop();
      this.at = at + 1;
      return 0;
    }
    if (frame.role === 'partners' && c === OPEN_OBJECT) {
      const index = frame.count++;
      frame.at = 'next';
      this.frames.push({ role: 'partner', index, at: 'open', keys: new Set() });
      this.pieces.push({ kind: 'partnerStart', index });
      this.at = at + 1;
      return 0;
    }
    return this.value(at, (value) => {
      const index = frame.count++;
      frame.at = 'next';
      this.pieces.push(frame.role === 'partners' ? { kind: 'partner', index, value } : { kind: 'product', partner: frame.partner, index, value });
    });
  }

  /** Reads the value that starts at `from` whole and hands it to `take`; nothing is taken unless it is all there and plain. */
  private value(from: number, take: (value: unknown) => void): number {
    const end = this.valueEnd(from);
    if (end < 0) return end;
    let value: unknown;
    try {
      value = JSON.parse(this.text.slice(from, end));
    } catch {
      return NOT_PLAIN;
    }
    take(value);
    this.at = end;
    return 0;
  }

  /**
   * Where the value starting at `from` ends: a string's closing quote, a word's end, or the bracket
   * that closes a container, with the keys of every object in it told apart. Its syntax is left to
   * `JSON.parse`: text that is not JSON only has to end somewhere, or be declined.
   */
  private valueEnd(from: number): number {
    const { text } = this;
    const length = text.length;
    const first = text.charCodeAt(from);
    if (first === QUOTE) return this.stringEnd(from);
    if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) return this.wordEnd(from);
    // Per container open: the keys an object has named, or null for an array.
    const open: (string[] | null)[] = [];
    let keyNext = false;
    for (let at = from; at < length;) {
      const c = text.charCodeAt(at);
      if (c === QUOTE) {
        const end = this.stringEnd(at);
        if (end < 0) return end;
        if (keyNext) {
          const key = this.keyOf(at, end);
          const keys = open.at(-1);
          if (key === null || keys === undefined || keys === null || keys.includes(key)) return NOT_PLAIN;
          keys.push(key);
          keyNext = false;
        }
        at = end;
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        open.push(c === OPEN_OBJECT ? [] : null);
        keyNext = c === OPEN_OBJECT;
        at += 1;
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        open.pop();
        at += 1;
        if (open.length === 0) return at;
        keyNext = false;
      } else if (c === COMMA) {
        keyNext = open.at(-1) !== null;
        at += 1;
      } else if (isSpace(c) || c === COLON) {
        at += 1;
      } else {
        const end = this.wordEnd(at);
        if (end < 0) return end;
        at = end;
      }
    }
    return MORE;
  }

  /** Where the string whose opening quote is at `from` ends (after its closing quote); declined past MAX_STRING_LENGTH written characters. */
  private stringEnd(from: number): number {
    const { text } = this;
    for (let search = from + 1; ;) {
      const quote = text.indexOf('"', search);
      if (quote < 0) return text.length - from > MAX_STRING_LENGTH + 2 ? NOT_PLAIN : MORE;
      let backslashes = 0;
      while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
      if (backslashes % 2 === 1) {
        search = quote + 1;
        continue;
      }
      return quote - from - 1 > MAX_STRING_LENGTH ? NOT_PLAIN : quote + 1;
    }
  }

  /** Where a number or a literal starting at `from` ends; one that reaches the end of the text so far may go on. */
  private wordEnd(from: number): number {
    const { text } = this;
    let at = from;
    while (at < text.length && !endsWord(text.charCodeAt(at))) at += 1;
    if (at - from > MAX_STRING_LENGTH) return NOT_PLAIN;
    return at === text.length ? MORE : at;
  }

  /** The key written between the quotes at `from` and before `end`, escapes read; null if it is not a JSON string. */
  private keyOf(from: number, end: number): string | null {
    const raw = this.text.slice(from + 1, end - 1);
    if (!raw.includes('\\')) {
      // A control character must be written escaped.
      for (let i = 0; i < raw.length; i += 1) if (raw.charCodeAt(i) < 0x20) return null;
      return raw;
    }
    try {
      return JSON.parse(this.text.slice(from, end)) as string;
    } catch {
      return null;
    }
  }

  private spaceFrom(from: number): number {
    const { text } = this;
    let at = from;
    while (at < text.length && isSpace(text.charCodeAt(at))) at += 1;
    return at;
  }
}
