import { isIP } from 'node:net';

/** The name part of a Host header (`name`, `name:port`, `[v6]:port`), lower case. */
function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']') === -1 ? undefined : host.indexOf(']'));
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '::1' || (isIP(name) === 4 && name.startsWith('127.'));
}

/**
 * Which Host headers a listener answers. A page cannot choose an IP literal or `localhost` for the
 * name its browser sends, only a DNS name it controls (DNS rebinding), so those always pass; other
 * names pass when they are the public name the operator configured, or when the listener is bound
 * beyond loopback with no public name given (then its names are not ours to know).
 */
export function hostRule(boundHost: string, publicUrl: string | null): (host: string) => boolean {
  const publicName = publicUrl === null ? null : new URL(publicUrl).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const anyName = publicName === null && !isLoopbackName(boundHost.toLowerCase());
  return (host) => {
    if (anyName) return true;
    const name = hostName(host);
    return isIP(name) !== 0 || isLoopbackName(name) || name === publicName;
  };
}
