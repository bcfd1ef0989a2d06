/**
 * What a change to the key set did, told with its announcement, so an instance that cannot read
 * the database can still apply it (docs/several-instances.md, keys while the database is away).
 */
export interface KeyChanges {
  /** Keys whose entries an instance holds no longer stand: revoked, given another hash, or moved to another partner. */
  readonly withdrawn: readonly string[];
  /** Keys an instance cannot know until it reads the database: issued, or given another hash or partner. */
  readonly added: readonly string[];
}

/** The announcements made since a mark, as an instance reads them back: the key ids of each kind. */
export interface AnnouncedKeyChanges {
  readonly withdrawn: ReadonlySet<string>;
  /** Once any key was added, a key the instance does not hold may be live. */
  readonly added: ReadonlySet<string>;
}

/**
 * Version tokens through which a write made anywhere tells every instance what to re-read
 * (docs/several-instances.md). A token is random, never a counter: a replaced token never comes
 * back, so a store that restarts or loses its data can never make old state look current.
 */
export interface ChangeVersions {
  /**
   * Replaces the key-set token: call after a key issued, revoked or imported has committed. With
   * `changes`, what changed is told too; without, the instances learn only that something did, and
   * cannot decide a key until they read the database.
   */
  keysChanged(changes?: KeyChanges): Promise<void>;
  /** Replaces each partner's catalog token: call after an import into their catalogs has committed. */
  catalogsChanged(partnerIds: readonly string[]): Promise<void>;
  /** The key-set token now; where there is none (never set, or lost), a fresh one is started. */
  keysVersion(): Promise<string>;
  /** The partner's catalog token now; a fresh one is started where there is none. */
  catalogVersion(partnerId: string): Promise<string>;
}
