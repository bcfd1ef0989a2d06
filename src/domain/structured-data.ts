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

/**
 * Google's findings on a VideoObject as they bear on it. Those on its `about` are Google's rules for
 * a Product rich result (offers, reviews, identifiers): they judge a Product that is a page's main
 * item, and matter only to a page that wants a Product rich result, not to the VideoObject, whose
 * `about` names the product the video shows. They are kept apart as notes.
 */
export interface VideoObjectFindings extends StructuredDataFindings {
  /** The findings on the Product the video is `about`, whatever their severity. */
  readonly notes: readonly StructuredDataFinding[];
}

/** Where a VideoObject's Product is: its `about`, and anything under it. */
const onProduct = (finding: StructuredDataFinding): boolean => finding.path === 'about' || finding.path.startsWith('about.');

export function videoObjectFindings(findings: StructuredDataFindings): VideoObjectFindings {
  return {
    errors: findings.errors.filter((f) => !onProduct(f)),
    warnings: findings.warnings.filter((f) => !onProduct(f)),
    notes: [...findings.errors, ...findings.warnings].filter(onProduct),
  };
}
