import { Buffer } from 'node:buffer';
import { deepFreeze } from './deep-freeze.js';
import { etagOf, LOOKUP_BODY_END, LOOKUP_BODY_START, lookupBody, lookupBodyOfText } from './lookup-body.js';
import type { LookupResult } from './lookup-result.js';

const BODY_START = Buffer.from(LOOKUP_BODY_START);
const BODY_END = Buffer.from(LOOKUP_BODY_END);

/**
 * A lookup's answer as storage holds it: the result, or the result already written as JSON text
 * beside its ETag, as an import stores it. Whichever form storage has is handed on as it is and the
 * other is made only when asked for, once: a stored text goes out as the body without being parsed
 * and written again, and a result held in memory is written the first time it is answered.
 */
export class LookupAnswer {
  // Fields, not nested objects: the response cache holds hundreds of thousands of answers, and
  // every object each holds is one more for the collector to trace.
  private parsed: LookupResult | undefined;
  private writtenBody: Buffer | undefined;
  private writtenEtag: string | undefined;

  private constructor(parsed: LookupResult | undefined, body: Buffer | undefined, etag: string | undefined) {
    this.parsed = parsed;
    this.writtenBody = body;
    this.writtenEtag = etag;
  }

  /** An answer held as its result (frozen here: answers are shared between requests). */
  static ofResult(result: LookupResult): LookupAnswer {
    return new LookupAnswer(deepFreeze(result), undefined, undefined);
  }

  /**
   * An answer held as the JSON text of its result and the ETag `etagOf` gave its body, both as an
   * import wrote them. The body is a buffer of its own, not a slice of Node's shared 8 KB slabs nor
   * of the buffer the text came in: a cached answer keeps alive its own bytes and nothing else.
   */
  static ofStoredText(resultJson: Uint8Array, etag: string): LookupAnswer {
    const body = Buffer.allocUnsafeSlow(BODY_START.length + resultJson.length + BODY_END.length);
    BODY_START.copy(body, 0);
    body.set(resultJson, BODY_START.length);
    BODY_END.copy(body, BODY_START.length + resultJson.length);
    return new LookupAnswer(undefined, body, etag);
  }

  /**
   * An answer whose whole body (what `lookupBody` writes) and ETag are at hand, kept by this service
   * or read whole from storage, taken as they are, without a copy: the caller hands over a buffer no
   * one writes into again.
   */
  static ofBody(body: Buffer, etag: string): LookupAnswer {
    return new LookupAnswer(undefined, body, etag);
  }

  /** An answer held as the JSON text of its result, with no ETag stored beside it: the ETag is made here, once. */
  static ofResultText(resultJson: string): LookupAnswer {
    return LookupAnswer.ofStoredText(Buffer.from(resultJson, 'utf8'), etagOf(lookupBodyOfText(resultJson)));
  }

  /** The result, parsed from the stored text the first time it is asked for. */
  get result(): LookupResult {
    this.parsed ??= deepFreeze((JSON.parse(this.body.toString('utf8')) as { data: LookupResult }).data);
    return this.parsed;
  }

  /** The body a lookup answers with (`lookupBody`), as bytes. */
  get body(): Buffer {
    if (this.writtenBody === undefined) this.write();
    return this.writtenBody!;
  }

  /** The result's JSON text inside the body (what follows `{"data":`), without a copy: a batch writes its items from it. */
  get resultJson(): Buffer {
    const { body } = this;
    return body.subarray(BODY_START.length, body.length - BODY_END.length);
  }

  /** The body's strong ETag (`etagOf`). */
  get etag(): string {
    if (this.writtenEtag === undefined) this.write();
    return this.writtenEtag!;
  }

  private write(): void {
    const body = Buffer.from(lookupBody(this.parsed!), 'utf8');
    this.writtenBody = body;
    this.writtenEtag = etagOf(body);
  }
}
