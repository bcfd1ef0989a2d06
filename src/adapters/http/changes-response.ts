import type { ChangesPage } from '../../application/changes/read-changes.js';
import { toChangeView, type ChangesResponse } from '../../domain/changes-view.js';
import { DomainError } from '../../domain/errors.js';
import { jsonAnswer, type Answer } from './answer.js';

/**
 * A page of the feed is the caller's alone and true only now; it carries no validator to
 * revalidate with, so a stored copy could only ever be replayed stale.
 */
export const CHANGES_CACHE_CONTROL = 'no-store';

/** A page of the feed as its answer. */
export function changesAnswer(page: ChangesPage): Answer {
  const body: ChangesResponse = { data: page.changes.map(toChangeView), next_cursor: page.nextCursor, has_more: page.hasMore };
  return jsonAnswer(200, JSON.stringify(body), ['Cache-Control', CHANGES_CACHE_CONTROL]);
}

/**
 * A query parameter the feed reads: absent, or given once. Given twice it names no one value,
 * and is refused with the code of a bad value of it.
 */
export function singleQueryValue(value: string | string[] | undefined, code: 'invalid_cursor' | 'invalid_limit', name: string): string | undefined {
  if (!Array.isArray(value)) return value;
  throw new DomainError(code, `Send ${name} once; it was sent ${value.length} times.`);
}
