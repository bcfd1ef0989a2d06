import type { AdminAccount } from '../../domain/admin.js';

/** Partner admins' accounts, by email (already normalized). */
export interface AdminAccounts {
  findByEmail(email: string): Promise<AdminAccount | null>;
  /** Stores the account; false, storing nothing, if an account with its email exists. */
  create(account: AdminAccount): Promise<boolean>;
}
