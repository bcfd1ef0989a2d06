import { hashToken } from '../../domain/admin.js';
import type { AdminSessions } from './admin-sessions.js';

/** Ends the session on the server: its cookie opens nothing any more. */
export class SignOut {
  constructor(private readonly sessions: AdminSessions) {}

  async execute(input: { sessionId: string }): Promise<void> {
    await this.sessions.delete(hashToken(input.sessionId));
  }
}
