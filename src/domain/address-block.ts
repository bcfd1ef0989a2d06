import { isIP } from 'node:net';

/** One IP address, or a CIDR block of them (`10.0.0.0/8`, `fd00::/8`). */
export interface AddressBlock {
  readonly address: string;
  readonly family: 'ipv4' | 'ipv6';
  /** The prefix length; null for a single address. */
  readonly prefixBits: number | null;
}

/** Parses `192.0.2.1`, `10.0.0.0/8` or `2001:db8::/32`; null for anything else. */
export function parseAddressBlock(text: string): AddressBlock | null {
  const [address = '', bits, extra] = text.split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return null;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (bits === undefined) return { address, family, prefixBits: null };
  const prefixBits = /^[0-9]{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  return prefixBits <= (version === 4 ? 32 : 128) ? { address, family, prefixBits } : null;
}
