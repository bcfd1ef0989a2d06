import type { FormatRules } from './schema-problems.js';
import { isValidSku } from './sku.js';
import { uploadDateProblem } from './upload-date.js';

/** The rules the catalog format's `format` keywords name (catalog-format.ts): each needs code, not a pattern. */
export const CATALOG_FORMAT_RULES: FormatRules = {
  'http-url': isHttpUrl,
  // The SKU rule is the API's own (sku.ts): one definition for what is imported and what is looked up.
  sku: isValidSku,
  'upload-date': (text) => {
    switch (uploadDateProblem(text)) {
      case 'format':
        return false;
      case 'calendar':
        return `must name a real day and time; got ${JSON.stringify(text)}`;
      case null:
        return true;
    }
  },
};

/** Parses as a URL, with the http: or https: scheme and a host (docs/decisions.md, catalog files). */
function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol, host } = new URL(text);
  return (protocol === 'http:' || protocol === 'https:') && host !== '';
}
