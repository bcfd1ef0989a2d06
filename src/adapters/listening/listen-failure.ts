import { reasonOf } from '../../domain/failure-reason.js';

/** The settings that place a listener, for the one line that says what to change when it cannot listen. */
export interface ListenerSettings {
  readonly port: string;
  readonly host: string;
}

/** The partner API's listener. */
export const API_SETTINGS: ListenerSettings = { port: 'PORT', host: 'HOST' };
export const PORTAL_SETTINGS: ListenerSettings = { port: 'PORTAL_PORT', host: 'PORTAL_HOST' };
export const METRICS_SETTINGS: ListenerSettings = { port: 'METRICS_PORT', host: 'METRICS_HOST' };

/**
 * Why a listener could not listen, naming the setting at fault and the fix: a port another program
 * holds, an address this machine does not have, a name that does not resolve, a port that needs
 * privileges. Anything else keeps Node's words, after the settings.
 */
export function listenFailure(error: unknown, settings: ListenerSettings, host: string, port: number): Error {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return new Error(`${settings.port}=${port}: another program already listens on ${where} (EADDRINUSE), perhaps another instance of this service. ` +
        `Stop it (\`ss -ltnp 'sport = :${port}'\` names it), or set ${settings.port} to a free port`);
    case 'EADDRNOTAVAIL':
      return new Error(`${settings.host}=${host}: this machine has no such address (EADDRNOTAVAIL). ` +
        `Set ${settings.host} to one of its addresses: 127.0.0.1 for this machine only, 0.0.0.0 for all of them`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new Error(`${settings.host}=${host}: the name does not resolve (${code}). Set ${settings.host} to an address (127.0.0.1, 0.0.0.0) or a name this machine resolves`);
    case 'EACCES':
      return new Error(`${settings.port}=${port}: this process may not listen on ${where} (EACCES); ports below 1024 need privileges. ` +
        `Set ${settings.port} to 1024 or above (a proxy in front can take port ${port}), or grant node the right: setcap cap_net_bind_service=+ep "$(command -v node)"`);
    default:
      return new Error(`${settings.port}, ${settings.host}: cannot listen on ${where}: ${reasonOf(error)}`);
  }
}
