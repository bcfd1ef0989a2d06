import type { LookupResult, VideoObjectJsonLd } from './types.js';

// Each of these could end the script element or break a JavaScript parser reading it.
const UNSAFE_IN_SCRIPT = /[<>&\u2028\u2029]/g;

/**
 * JSON text of `value` that is safe inside a `<script>` element: `<`, `>`, `&`, U+2028 and
 * U+2029 are written as `\uXXXX`, which JSON parsers read back as the same characters.
 */
export function jsonForScript(value: VideoObjectJsonLd): string {
  return JSON.stringify(value).replace(UNSAFE_IN_SCRIPT, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The `<script type="application/ld+json">` element to put on the page at `pageUrl`: the
 * `json_ld` of the one entry whose `pdp_url` is exactly `pageUrl` (same string, no
 * normalisation: pass the URL as it was configured in the catalog), or `''` when no entry
 * matches or its `json_ld` is not generated yet. Never another page's object.
 */
export function jsonLdScriptFor(result: LookupResult, pageUrl: string): string {
  const jsonLd = result.product.pdp_urls.find((entry) => entry.pdp_url === pageUrl)?.json_ld;
  return jsonLd ? `<script type="application/ld+json">${jsonForScript(jsonLd)}</script>` : '';
}
