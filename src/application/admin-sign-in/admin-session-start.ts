import { hashToken, randomToken, type AdminAccount, type AdminSession } from '../../domain/admin.js';
import type { AdminSessions } from './admin-sessions.js';

/** A session just begun: its id goes in the admin's cookie, and nowhere else. */
export interface StartedSession {
  readonly sessionId: string;
  readonly session: AdminSession;
}

/**
 * A fresh session for the account, with a fresh id (a session is never carried over a sign-in,
 * so an id planted before it is worthless), and ends the one it replaces, if any.
 */
export async function startSession(sessions: AdminSessions, account: AdminAccount, now: Date, replacing: string | undefined): Promise<StartedSession> {
  if (replacing !== undefined) await sessions.delete(hashToken(replacing));
  const sessionId = randomToken();
  const session: AdminSession = {
    idHash: hashToken(sessionId),
    adminId: account.id,
    partnerId: account.partnerId,
    email: account.email,
    csrfToken: randomToken(),
    createdAt: now,
    lastSeenAt: now,
  };
  await sessions.create(session);
  return { sessionId, session };
}
