import { randomUUID } from 'node:crypto';
import type { ChangeVersions } from '../../application/ports/change-versions.js';

/** Version tokens of one process: for a deployment of one instance, and for tests without Redis. */
export class MemoryChangeVersions implements ChangeVersions {
  private keys: string | undefined;
  private readonly catalogs = new Map<string, string>();

  keysChanged(): Promise<void> {
    this.keys = randomUUID();
    return Promise.resolve();
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
