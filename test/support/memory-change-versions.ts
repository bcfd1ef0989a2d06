import { randomUUID } from 'node:crypto';
import type { AnnouncedKeyChanges, ChangeVersions, KeyChanges } from '../../src/application/instances/change-versions.js';

/** Version tokens of one process, for tests without Redis: a deployment without Redis has no other instance to tell. */
export class MemoryChangeVersions implements ChangeVersions {
  private keys: string | undefined;
  private readonly catalogs = new Map<string, string>();
  /** The key changes announced, each at a tick of a clock of its own; undefined for one that did not say. */
  private readonly keyChanges: { readonly at: number; readonly changes: KeyChanges | undefined }[] = [];
  private ticks = 0;

  keysChanged(changes?: KeyChanges): Promise<void> {
    this.keyChanges.push({ at: ++this.ticks, changes });
    this.keys = randomUUID();
    return Promise.resolve();
  }

  /** A mark on this store's clock: a change announced later is at or after it. */
  keyChangesMark(): Promise<number> {
    return Promise.resolve(++this.ticks);
  }

  /** The key changes announced at or after the mark; null if one of them did not say what it was. */
  keyChangesSince(mark: number): Promise<AnnouncedKeyChanges | null> {
    const since = this.keyChanges.filter((entry) => entry.at >= mark);
    if (since.some((entry) => entry.changes === undefined)) return Promise.resolve(null);
    return Promise.resolve({
      withdrawn: new Set(since.flatMap((entry) => entry.changes!.withdrawn)),
      added: new Set(since.flatMap((entry) => entry.changes!.added)),
    });
  }

  catalogsChanged(partnerIds: readonly string[]): Promise<void> {
    for (const partnerId of partnerIds) this.catalogs.set(partnerId, randomUUID());
    return Promise.resolve();
  }

  keysVersion(): Promise<string> {
    this.keys ??= randomUUID();
    return Promise.resolve(this.keys);
  }

  catalogVersion(partnerId: string): Promise<string> {
    let token = this.catalogs.get(partnerId);
    if (token === undefined) {
      token = randomUUID();
      this.catalogs.set(partnerId, token);
    }
    return Promise.resolve(token);
  }
}
