import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { parseAddressBlock } from '../../domain/address-block.js';

/** Who sent a request: the peer's address, or the client a trusted proxy forwarded it for. */
export type ClientAddressOf = (req: IncomingMessage) => string;

/** Addresses and CIDR blocks (`10.0.0.0/8`, `fd00::/8`) of the proxies whose X-Forwarded-For is believed. */
export interface TrustedProxies {
  has(address: string): boolean;
  readonly empty: boolean;
}

/** `::ffff:192.0.2.1` is the IPv4 peer 192.0.2.1 on a dual-stack socket. */
export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** The peer's own address: what counts when no proxy is trusted. */
export const peerAddress: ClientAddressOf = (req) => plainAddress(req.socket.remoteAddress ?? '');

/** A parsed TRUSTED_PROXIES entry list; throws on an entry that is neither an address nor a CIDR block. */
export function trustedProxies(entries: readonly string[]): TrustedProxies {
  const list = new BlockList();
  for (const entry of entries) {
    const block = parseAddressBlock(entry);
    if (block === null) throw new Error(`not an IP address or CIDR block: ${JSON.stringify(entry)}`);
    if (block.prefixBits === null) list.addAddress(block.address, block.family);
    else list.addSubnet(block.address, block.prefixBits, block.family);
  }
  return {
    empty: entries.length === 0,
    has: (address) => {
      const plain = plainAddress(address);
      const family = isIP(plain);
      return family !== 0 && list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

/**
 * The client's address. Only a request whose peer is a trusted proxy has its X-Forwarded-For read,
 * from the right: each hop that is itself a trusted proxy is skipped, and the first that is not is
 * the client. Without trusted proxies the header is ignored, so a client cannot choose its address.
 */
export function clientAddressResolver(proxies: TrustedProxies): ClientAddressOf {
  return (req) => {
    const peer = peerAddress(req);
    if (proxies.empty || !proxies.has(peer)) return peer;
    const header = req.headers['x-forwarded-for'];
    const forwarded = Array.isArray(header) ? header.join(',') : header;
    if (forwarded === undefined || forwarded === '') return peer;
    let client = peer;
    const hops = forwarded.split(',');
    for (let i = hops.length - 1; i >= 0; i -= 1) {
      const hop = plainAddress(hops[i]!.trim());
      // A hop that is not an address was written by whoever is behind the last proxy we trust.
      if (isIP(hop) === 0) return client;
      client = hop;
      if (!proxies.has(hop)) return hop;
    }
    return client;
  };
}
