import type { LookupAnswer } from '../../domain/lookup-answer.js';
import { JSON_TYPE, type Answer } from './answer.js';

/** A partner's cache may keep an answer but must revalidate it (cheaply, by ETag) before each use. */
export const LOOKUP_CACHE_CONTROL = 'private, max-age=0, must-revalidate';
export const LOOKUP_VARY = 'Authorization, X-API-Key';

/**
 * The answer to a lookup, or to a batch of them: the body as bytes with a strong ETag, or 304 with
 * no body when the caller's If-None-Match already names it. Answers depend on the key, hence Vary.
 */
export function lookupAnswer(answer: Pick<LookupAnswer, 'etag' | 'body'>, ifNoneMatch: string | undefined): Answer {
  // Made per answer, not kept per answer object: lists kept for each of the response cache's answers
  // (in a WeakMap) are hundreds of thousands more objects for every full collection to trace.
  const { etag, body } = answer;
  if (ifNoneMatch !== undefined && ifNoneMatchNames(ifNoneMatch, etag)) {
    return { status: 304, headers: ['ETag', etag, 'Cache-Control', LOOKUP_CACHE_CONTROL, 'Vary', LOOKUP_VARY] };
  }
  return {
    status: 200,
    headers: ['ETag', etag, 'Cache-Control', LOOKUP_CACHE_CONTROL, 'Vary', LOOKUP_VARY, 'Content-Type', JSON_TYPE, 'Content-Length', String(body.length)],
    body,
  };
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
