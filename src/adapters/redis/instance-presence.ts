export const DEFAULT_INSTANCES_KEY = 'pcat:instances';

/** How often an instance tells Redis it is still there, in the count of a request. */
const INSTANCE_REFRESH_MS = 1_000;

/**
 * This instance among those sharing Redis: the count script records `id` as seen now in the sorted
 * set at `key` when it is named, and answers how many instances were seen within the window, which
 * is how each instance works out its share of a key's limit while Redis is away.
 */
export class InstancePresence {
  private lastRefresh = -Infinity;

  constructor(readonly id: string, readonly key: string) {}

  /** This instance's id when it is time to tell Redis it is still there, else ''. */
  toRefresh(): string {
    const now = performance.now();
    if (now - this.lastRefresh < INSTANCE_REFRESH_MS) return '';
    this.lastRefresh = now;
    return this.id;
  }
}
