import Validator from '@adobe/structured-data-validator';
import WebAutoExtractor from '@marbec/web-auto-extractor';
import type { StructuredDataFinding, StructuredDataFindings } from '../../domain/structured-data.js';

interface Issue {
  readonly issueMessage: string;
  readonly severity: 'ERROR' | 'WARNING';
  readonly path?: readonly { readonly property?: string }[];
  readonly fieldNames?: readonly string[];
}

/**
 * Checks a JSON-LD object against Google's structured-data rules, with an independent, maintained
 * validator rather than rules of our own: the object is embedded in a page as a partner would embed
 * it, extracted again as a crawler would, then validated. Runs offline.
 */
export async function checkStructuredData(jsonLd: object): Promise<StructuredDataFindings> {
  // Escaped as the client's embedding helper escapes it, so no value can end the element.
  const script = JSON.stringify(jsonLd).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const page = `<!doctype html><html><head><script type="application/ld+json">${script}</script></head><body></body></html>`;
  const extracted = new WebAutoExtractor({ addLocation: true, embedSource: ['rdfa', 'microdata'] }).parse(page);
  const issues = (await new Validator().validate(extracted)) as readonly Issue[];
  const finding = (issue: Issue): StructuredDataFinding => ({
    path: (issue.path ?? []).flatMap((step) => (step.property === undefined ? [] : [step.property])).join('.'),
    message: issue.issueMessage,
    fields: [...(issue.fieldNames ?? [])],
  });
  return {
    errors: issues.filter((issue) => issue.severity === 'ERROR').map(finding),
    warnings: issues.filter((issue) => issue.severity === 'WARNING').map(finding),
  };
}
