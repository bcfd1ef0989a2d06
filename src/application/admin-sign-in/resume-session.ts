import { hashToken, SESSION_IDLE_MS, SESSION_MAX_AGE_MS, SESSION_TOUCH_INTERVAL_MS, type AdminSession } from '../../domain/admin.js';
import type { AdminSessions } from './admin-sessions.js';
import type { Clock } from '../common/clock.js';

/** The session behind a cookie's id, if it has not ended; an idle or too old one is ended here. */
export class ResumeSession {
  constructor(
    private readonly sessions: AdminSessions,
    private readonly clock: Clock,
    private readonly idleMs = SESSION_IDLE_MS,
  ) {}

  async execute(input: { sessionId: string }): Promise<AdminSession | null> {
    const idHash = hashToken(input.sessionId);
    const session = await this.sessions.find(idHash);
    if (session === null) return null;
    const now = this.clock.now();
    const idle = now - session.lastSeenAt.getTime();
    if (idle >= this.idleMs || now - session.createdAt.getTime() >= SESSION_MAX_AGE_MS) {
      await this.sessions.delete(idHash);
      return null;
    }
    // Written at most once a minute: a page view is not a database write.
    if (idle >= SESSION_TOUCH_INTERVAL_MS) {
      const lastSeenAt = new Date(now);
      await this.sessions.touch(idHash, lastSeenAt);
      return { ...session, lastSeenAt };
    }
    return session;
  }
}
