import type { AdminSession } from '../../domain/admin.js';

/** Server-side sessions, by the hash of their id. */
export interface AdminSessions {
  create(session: AdminSession): Promise<void>;
  find(idHash: string): Promise<AdminSession | null>;
  touch(idHash: string, lastSeenAt: Date): Promise<void>;
  delete(idHash: string): Promise<void>;
}
