/**
 * Each catalog's version as the database holds it: it moves in the very transaction that changes the
 * catalog's answers (an import's), so a version read after the change committed shows it. An
 * instance that cannot learn of changes through the shared store (Redis lost, switching, or not
 * configured) reads these before it serves an answer it holds (docs/several-instances.md, changes
 * seen without Redis).
 */
export interface CatalogVersions {
  /**
   * The catalog's version now: a text that changes whenever the catalog's answers do, the same for
   * a catalog not stored. Reads asked for in one turn of the event loop share one statement.
   */
  versionOf(catalogId: string): Promise<string>;
}
