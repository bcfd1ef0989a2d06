import type { AuditEvent } from '../../domain/admin.js';
import type { AuditLog } from './audit-log.js';

/** How many events the audit log page shows, newest first. */
export const AUDIT_LOG_PAGE_SIZE = 200;

/** The partner's audit log, newest first. */
export class ReadAuditLog {
  constructor(private readonly log: AuditLog) {}

  execute(input: { partnerId: string }): Promise<AuditEvent[]> {
    return this.log.list(input.partnerId, AUDIT_LOG_PAGE_SIZE);
  }
}
