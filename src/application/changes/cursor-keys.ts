import type { CursorKey } from '../../domain/changes.js';

/** Where the deployment's cursor key comes from (docs/architecture.md, the changes feed). */
export interface CursorKeys {
  /**
   * The key every instance of the deployment signs its cursors with: the same for the life of the
   * process once had, and then given at once (no promise), so a page's read starts in the turn its
   * request arrived in.
   */
  cursorKey(): CursorKey | Promise<CursorKey>;
}
