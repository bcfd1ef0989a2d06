import ipaddr from 'ipaddr.js';
import { WebhookUrlRefused, type WebhookUrlProblem } from './webhook-errors.js';

/** Longest endpoint URL, in characters, as given and as stored. */
export const MAX_WEBHOOK_URL_LENGTH = 2_048;

export interface WebhookUrlOptions {
  /** Development and tests: `http` too, and the addresses a public endpoint never has. */
  readonly allowPrivateTargets: boolean;
}

/** The ranges ipaddr.js names that a public endpoint is never in, each with its reason. */
const REFUSED_RANGES: Readonly<Record<string, { problem: WebhookUrlProblem; kind: string }>> = {
  loopback: { problem: 'loopback', kind: 'a loopback address' },
  private: { problem: 'private', kind: 'a private address' },
  linkLocal: { problem: 'link_local', kind: 'a link-local address' },
  carrierGradeNat: { problem: 'carrier_grade_nat', kind: 'a carrier-grade NAT address' },
  uniqueLocal: { problem: 'unique_local', kind: 'a unique-local address' },
  multicast: { problem: 'multicast', kind: 'a multicast address' },
  unspecified: { problem: 'unspecified', kind: 'the unspecified address' },
  broadcast: { problem: 'special_purpose', kind: 'the broadcast address' },
};

/** Why an address is not a public one a webhook may go to; null for a public unicast address. */
export interface RefusedAddress {
  readonly problem: WebhookUrlProblem;
  /** For people: `127.0.0.1 is a loopback address`. */
  readonly reason: string;
}

/**
 * Classifies one IP address (no brackets) with ipaddr.js. An IPv4-mapped IPv6 address is judged as
 * the IPv4 address it carries; the deprecated IPv4-compatible block (`::a.b.c.d`) and every range
 * ipaddr.js does not call `unicast` (documentation, benchmarking, NAT64, 6to4, Teredo...) are
 * refused as well: a public endpoint has a plain unicast address. Null for one, or for text that is no address.
 */
export function refusedAddress(address: string): RefusedAddress | null {
  if (!ipaddr.isValid(address)) return null;
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  const refused = REFUSED_RANGES[range];
  const named = parsed.kind() === 'ipv4' && !ipaddr.IPv4.isIPv4(address) ? `${address} (IPv4-mapped ${parsed.toString()})` : address;
  if (refused !== undefined) return { problem: refused.problem, reason: `${named} is ${refused.kind}` };
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).match(ipaddr.IPv6.parse('::'), 96)) {
    return { problem: 'special_purpose', reason: `${address} is an IPv4-compatible IPv6 address, a deprecated form` };
  }
  if (range !== 'unicast') return { problem: 'special_purpose', reason: `${named} is in a special-purpose range (${range})` };
  return null;
}

/**
 * Checks an endpoint URL's form and any address written in it, and returns it as it will be stored
 * and called (the WHATWG form: `https://example.com` gains its `/`). Resolves no name: names are
 * checked at each delivery, since what they resolve to changes. Throws `WebhookUrlRefused` with the reason.
 */
export function checkWebhookUrl(text: string, options: WebhookUrlOptions): string {
  // Before parsing, so a huge text costs nothing; the stored form is checked again below.
  if (text.length > MAX_WEBHOOK_URL_LENGTH) throw tooLong(text.length);
  // The URL parser would silently drop tabs and newlines, and trim blanks: a URL with them is a mistake.
  if (hasBlankOrControl(text)) refuse('control_characters', 'it contains a blank or a control character');
  if (!URL.canParse(text)) refuse('not_absolute', 'not an absolute URL');
  const url = new URL(text);
  const schemes = options.allowPrivateTargets ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    refuse('not_https', `the scheme is ${url.protocol.slice(0, -1)}; only ${schemes.map((s) => s.slice(0, -1)).join(' or ')} is allowed`);
  }
  // Never echoed: a URL with credentials holds a password.
  if (url.username !== '' || url.password !== '') refuse('credentials', 'it holds credentials (a user name or a password before the host); give a URL without them');
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH) throw tooLong(url.href.length);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const refused = options.allowPrivateTargets ? null : refusedAddress(host);
  if (refused !== null) refuse(refused.problem, `${refused.reason}; webhooks go to public addresses only`);
  return url.href;
}

function hasBlankOrControl(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f) return true;
  }
  return false;
}

function refuse(problem: WebhookUrlProblem, reason: string): never {
  throw new WebhookUrlRefused(problem, reason);
}

function tooLong(length: number): WebhookUrlRefused {
  return new WebhookUrlRefused('too_long', `it is ${length.toLocaleString('en')} characters long; at most ${MAX_WEBHOOK_URL_LENGTH.toLocaleString('en')}`);
}
