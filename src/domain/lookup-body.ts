import { createHash } from 'node:crypto';
import type { LookupResult } from './lookup-result.js';

/** The body a lookup answers with: the answer under `data`, keys in the order the answer was built. */
export function lookupBody(result: LookupResult): string {
  return lookupBodyOfText(JSON.stringify(result));
}

/** What a lookup body holds before and after the answer's JSON text. */
export const LOOKUP_BODY_START = '{"data":';
export const LOOKUP_BODY_END = '}';

/** The same, from the answer already written as JSON text. */
export function lookupBodyOfText(answer: string): string {
  return `${LOOKUP_BODY_START}${answer}${LOOKUP_BODY_END}`;
}

/**
 * The strong ETag of a lookup body. Defined once, so the ETag an import stores beside an answer
 * is the one a lookup of that answer sends.
 */
export function etagOf(body: string | Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}
