import type { Invitation } from '../../domain/admin.js';

/** Invitations, by the hash of their token. */
export interface Invitations {
  save(invitation: Invitation): Promise<void>;
  find(tokenHash: string): Promise<Invitation | null>;
  /** Marks it used if it is unused and unexpired at `at`; true only for the one caller that did. */
  use(tokenHash: string, at: Date): Promise<boolean>;
}
