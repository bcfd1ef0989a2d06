import { AUDIT_RETENTION_MS, SIGN_IN_FAILURE_WINDOW_MS } from '../../domain/admin.js';
import type { AuditLog } from './audit-log.js';
import type { Clock } from '../common/clock.js';
import type { SignInThrottle } from './sign-in-throttle.js';

/**
 * Forgets what no longer counts: failed sign-ins out of their window, ended locks, and audit events
 * past their retention. Run every `ADMIN_RECORDS_PRUNE_INTERVAL_MS` by whoever runs the portal, so
 * the tables hold what the last quarter hour and the retention need, whatever came before.
 */
export class PruneAdminRecords {
  constructor(
    private readonly throttle: SignInThrottle,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  async execute(): Promise<void> {
    const now = this.clock.now();
    await this.throttle.prune(new Date(now - SIGN_IN_FAILURE_WINDOW_MS), new Date(now));
    await this.audit.prune(new Date(now - AUDIT_RETENTION_MS));
  }
}
