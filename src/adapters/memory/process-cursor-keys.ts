import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../../application/common/clock.js';
import type { CursorKeys } from '../../application/changes/cursor-keys.js';
import type { CursorKey } from '../../domain/changes.js';

/** Bytes of a generated cursor secret. */
export const CURSOR_SECRET_BYTES = 32;

/**
 * One process's cursor key: `CURSOR_SECRET` when set, else random bytes made now, and signing
 * begins now. Memory storage's feed starts again with every process, and its cursors with it: no
 * process ever served it unsigned, so no unsigned cursor is taken.
 */
export function processCursorKeys(options: { secret?: string | null; clock?: Clock } = {}): CursorKeys {
  const configured = options.secret ?? null;
  const key: CursorKey = {
    secret: configured === null ? randomBytes(CURSOR_SECRET_BYTES) : Buffer.from(configured, 'utf8'),
    signingSince: new Date((options.clock ?? systemClock).now()),
    unsignedIssuedTo: new Set(),
  };
  return { cursorKey: () => key };
}
