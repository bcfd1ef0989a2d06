import { isIPv4, isIPv6 } from 'node:net';

/** The one group of every address that is no IP address at all: they share one allowance rather than escape it. */
export const UNKNOWN_ADDRESS_GROUP = 'unknown';

const HEXTETS = 8;
/** An IPv6 host usually holds a whole /64: its first four groups. */
const IPV6_GROUP_HEXTETS = 4;

/**
 * The group a client address is counted in: an IPv4 address alone (an IPv4-mapped IPv6 address,
 * `::ffff:192.0.2.1` or `::ffff:c000:201`, as that IPv4 address), an IPv6 address by its /64
 * (`2001:db8:1:2::/64`), so walking through the addresses one host holds gains nothing.
 */
export function addressGroup(address: string): string {
  if (isIPv4(address)) return address;
  const hextets = ipv6Hextets(address);
  if (hextets === null) return UNKNOWN_ADDRESS_GROUP;
  if (hextets.slice(0, 5).every((h) => h === 0) && hextets[5] === 0xffff) {
    const [high = 0, low = 0] = hextets.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return `${hextets.slice(0, IPV6_GROUP_HEXTETS).map((h) => h.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (zone index ignored), or null if it is none. */
function ipv6Hextets(address: string): number[] | null {
  const [bare = ''] = address.split('%', 1);
  if (!isIPv6(bare)) return null;
  const [head = '', tail] = bare.split('::');
  const parts = (text: string): number[] => text === '' ? [] : text.split(':').flatMap((part) => {
    if (!isIPv4(part)) return [Number.parseInt(part, 16)];
    const [a = 0, b = 0, c = 0, d = 0] = part.split('.').map(Number);
    return [(a << 8) | b, (c << 8) | d];
  });
  const front = parts(head);
  const back = tail === undefined ? [] : parts(tail);
  return [...front, ...Array<number>(HEXTETS - front.length - back.length).fill(0), ...back];
}
