import { etagOf, lookupBody } from '../../domain/lookup-body.js';
import type { LookupResult } from '../../domain/lookup-result.js';
import { jsonAnswer, type Answer, type HeaderList } from './answer.js';

interface Serialized {
  readonly body: Buffer;
  readonly etag: string;
  /** The answer's own headers, for 200 and for 304, made with the body rather than per request. */
  readonly ok: HeaderList;
  readonly notModified: HeaderList;
}

/**
 * Bodies by result object: storage hands out the same object for as long as it is current
 * (in-memory always, MySQL for the response cache's TTL), so each is serialized and hashed once.
 */
const serialized = new WeakMap<LookupResult, Serialized>();

/** The body and strong ETag of a lookup result, computed once per result object. */
export function serialize(result: LookupResult): Serialized {
  let entry = serialized.get(result);
  if (entry === undefined) {
    const body = Buffer.from(lookupBody(result), 'utf8');
    const etag = etagOf(body);
    const notModified = ['ETag', etag, 'Cache-Control', LOOKUP_CACHE_CONTROL, 'Vary', LOOKUP_VARY];
    entry = { body, etag, notModified, ok: jsonAnswer(200, body, notModified).headers };
    serialized.set(result, entry);
  }
  return entry;
}

/** A partner's cache may keep an answer but must revalidate it (cheaply, by ETag) before each use. */
export const LOOKUP_CACHE_CONTROL = 'private, max-age=0, must-revalidate';
export const LOOKUP_VARY = 'Authorization, X-API-Key';

/**
 * The answer to a lookup: the body as bytes with a strong ETag, or 304 with no body when the
 * caller's If-None-Match already names it. Answers depend on the key, hence Vary.
 */
export function lookupAnswer(result: LookupResult, ifNoneMatch: string | undefined): Answer {
  const { body, etag, ok, notModified } = serialize(result);
  if (ifNoneMatch !== undefined && ifNoneMatchNames(ifNoneMatch, etag)) return { status: 304, headers: notModified };
  return { status: 200, headers: ok, body };
}

/** RFC 9110 13.1.2: weak comparison, a list of tags, or `*`. */
export function ifNoneMatchNames(header: string, etag: string): boolean {
  if (header === '') return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return (trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed) === etag;
  });
}
