import { isIP } from 'node:net';
import { parseAddressBlock } from '../../domain/address-block.js';
import type { Config } from './config.js';

/** A setting whose value makes the deployment less safe than its default does, and what it gives up. */
export interface Weakening {
  /** The setting and its value, as written in the environment. */
  readonly setting: string;
  readonly weakens: string;
}

/** Narrower than this, a trusted block is a network of proxies; wider, it is most of the internet. */
const WIDEST_TRUSTED_PREFIX = { ipv4: 8, ipv6: 16 } as const;

/**
 * The settings of this configuration that weaken the deployment: each is allowed, and each is said
 * at start, so that a value meant for development or a typo does not go unnoticed in production.
 */
export function weakeningSettings(config: Config): Weakening[] {
  const found: Weakening[] = [];
  if (config.webhooks.allowPrivateTargets) {
    found.push({
      setting: 'WEBHOOK_ALLOW_PRIVATE_TARGETS=true',
      weakens: 'webhook endpoints may be plain http and may name loopback, private and other non-public addresses, ' +
        'so partner admins can make this service send requests into its own network: for development and tests only',
    });
  }
  const { trustedProxies, portal } = config.listeners;
  const wide = trustedProxies.filter((entry) => {
    const block = parseAddressBlock(entry);
    return block !== null && block.prefixBits !== null && block.prefixBits < WIDEST_TRUSTED_PREFIX[block.family];
  });
  if (wide.length > 0) {
    found.push({
      setting: `TRUSTED_PROXIES=${trustedProxies.join(',')}`,
      weakens: `${wide.join(', ')} ${wide.length === 1 ? 'is' : 'are'} far wider than a network of proxies: any client in ${wide.length === 1 ? 'it' : 'them'} may name ` +
        'any address in X-Forwarded-For, and so slip the limits kept per address (MAX_CONNECTIONS_PER_ADDRESS, AUTH_FAILURES_PER_MINUTE, ' +
        'the portal\'s sign-in limits); list only the addresses of your proxies',
    });
  }
  if (portal.port !== 0 && !portal.secureCookies) {
    const https = portal.publicUrl?.startsWith('https:') === true ? portal.publicUrl : null;
    if (https !== null || !isLoopback(portal.host)) {
      found.push({
        setting: 'PORTAL_SECURE_COOKIES=false',
        weakens: `the portal's session cookie is not marked Secure though ${https === null ? `the portal listens on ${portal.host}, beyond this machine` : `admins reach the portal at ${https}`}: ` +
          'a browser sends it over plain http too, where anyone on the way can read it; set PORTAL_SECURE_COOKIES=true once admins reach the portal over https',
      });
    }
  }
  return found;
}

/** One warning line per weakening setting, at start. */
export function warnOfWeakeningSettings(config: Config, logger: { warn(fields: object, message: string): void }): void {
  for (const { setting, weakens } of weakeningSettings(config)) logger.warn({ setting }, `${setting} weakens this deployment: ${weakens}`);
}

function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}
