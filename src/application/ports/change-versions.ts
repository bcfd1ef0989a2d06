/**
 * Version tokens through which a write made anywhere tells every instance what to re-read
 * (docs/several-instances.md). A token is random, never a counter: a replaced token never comes
 * back, so a store that restarts or loses its data can never make old state look current.
 */
export interface ChangeVersions {
  /** Replaces the key-set token: call after a key issued, revoked or imported has committed. */
  keysChanged(): Promise<void>;
  /** Replaces each partner's catalog token: call after an import into their catalogs has committed. */
  catalogsChanged(partnerIds: readonly string[]): Promise<void>;
  /** The key-set token now; where there is none (never set, or lost), a fresh one is started. */
  keysVersion(): Promise<string>;
  /** The partner's catalog token now; a fresh one is started where there is none. */
  catalogVersion(partnerId: string): Promise<string>;
}
