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

/**
 * What separates a token's random part from the database position it carries: the primary's
 * replication position after the change committed (docs/several-instances.md, read your writes).
 * Neither a random token nor a position holds it.
 */
const POSITION_MARK = '@';

/** A token that carries the position its change committed at; `position` null: a token that carries none. */
export function tokenAt(random: string, position: string | null): string {
  return position === null ? random : `${random}${POSITION_MARK}${position}`;
}

/** The position a token carries; null for one that carries none (started where a store had lost its tokens, or announced without a database). */
export function positionIn(token: string): string | null {
  const at = token.indexOf(POSITION_MARK);
  return at === -1 ? null : token.slice(at + 1);
}

/**
 * Told, as changes are seen, the positions reads must reach before they may go to a replica: a
 * replica that has not applied a change must not answer under the token that announced it.
 */
export interface ChangePositions {
  /** A change was seen that committed at this position. */
  seen(position: string): void;
  /**
   * A change may have gone unseen (a read of the tokens given up, the shared store back after a
   * loss), or one was seen whose position is not known: reads must reach the primary's own position.
   */
  unknown(): void;
}
