/** Where the portal's pages live; the invitation link is built here for the CLI and the start banner alike. */
export const PORTAL_PATHS = {
  login: '/portal/login',
  logout: '/portal/logout',
  invitePrefix: '/portal/invite/',
  apiKeys: '/portal/settings/api-keys',
  webhooks: '/portal/settings/webhooks',
  auditLog: '/portal/settings/audit-log',
} as const;

/** The page where an invitation is accepted, under the portal's public address. */
export function invitationUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${PORTAL_PATHS.invitePrefix}${encodeURIComponent(token)}`;
}

/** The portal's address as configured, or as it listens. */
export function portalBaseUrl(portal: { readonly publicUrl: string | null; readonly host: string; readonly port: number }): string {
  if (portal.publicUrl !== null) return portal.publicUrl;
  const host = portal.host.includes(':') ? `[${portal.host}]` : portal.host;
  return `http://${host}:${portal.port}`;
}
