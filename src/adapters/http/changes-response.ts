import type { ChangesPage } from '../../application/changes/read-changes.js';
import { toChangeView, type ChangesResponse } from '../../domain/changes-view.js';
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

