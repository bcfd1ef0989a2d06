import type { AuditEvent } from '../../domain/admin.js';

/** Who acted: an admin of the portal, or an operator at the command line (null). */
export type Actor = { readonly adminEmail: string } | null;

/** What admins and operators did to keys and sessions; append-only, kept for a stated time. */
export interface AuditLog {
  record(event: AuditEvent): Promise<void>;
  /** The partner's events, newest first, at most `limit`. */
  list(partnerId: string, limit: number): Promise<AuditEvent[]>;
  /** Forgets the events from before `before`. */
  prune(before: Date): Promise<void>;
}
