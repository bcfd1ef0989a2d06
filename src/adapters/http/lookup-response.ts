import type { LookupAnswer } from '../../domain/lookup-answer.js';
import { jsonAnswer, type Answer, type HeaderList } from './answer.js';

/** An answer's own headers, for 200 and for 304, made with its body rather than per request. */
interface AnswerHeaders {
  readonly ok: HeaderList;
  readonly notModified: HeaderList;
}

/**
 * Header lists by answer object: storage hands out the same object for as long as it is current
 * (in-memory always, MySQL for the response cache's TTL), so each list is made once.
 */
const headerLists = new WeakMap<LookupAnswer, AnswerHeaders>();

function headersOf(answer: LookupAnswer): AnswerHeaders {
  let entry = headerLists.get(answer);
  if (entry === undefined) {
    const notModified = ['ETag', answer.etag, 'Cache-Control', LOOKUP_CACHE_CONTROL, 'Vary', LOOKUP_VARY];
    entry = { notModified, ok: jsonAnswer(200, answer.body, notModified).headers };
    headerLists.set(answer, entry);
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
export function lookupAnswer(answer: LookupAnswer, ifNoneMatch: string | undefined): Answer {
  const { ok, notModified } = headersOf(answer);
  if (ifNoneMatch !== undefined && ifNoneMatchNames(ifNoneMatch, answer.etag)) return { status: 304, headers: notModified };
  return { status: 200, headers: ok, body: answer.body };
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
