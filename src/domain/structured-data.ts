/** One finding of search engines' rules on a JSON-LD object. */
export interface StructuredDataFinding {
  /** Where in the object: `` for the object itself, `about` for its Product, and so on. */
  readonly path: string;
  readonly message: string;
  /** The properties the finding is about. */
  readonly fields: readonly string[];
}

/** What search engines' rules say of one JSON-LD object. */
export interface StructuredDataFindings {
  /** What makes a search engine ignore the object (its required properties). */
  readonly errors: readonly StructuredDataFinding[];
  /** What it would use if present (its recommended properties). */
  readonly warnings: readonly StructuredDataFinding[];
}
