import type { ApiKeyRecord } from '../../application/keys/api-key-admin.js';
import type { AdminSession, AuditEvent } from '../../domain/admin.js';
import { KEY_MODES, type KeyMode } from '../../domain/api-key.js';
import { html, type Html } from './html.js';
import { PORTAL_PATHS } from './portal-paths.js';

export const ASSET_PATHS = { css: '/portal/assets/portal.css', js: '/portal/assets/portal.js' } as const;

/** The signed-in admin, as every signed-in page shows them. */
export interface Viewer {
  readonly email: string;
  readonly partnerId: string;
  readonly csrfToken: string;
}

export function viewerOf(session: AdminSession): Viewer {
  return { email: session.email, partnerId: session.partnerId, csrfToken: session.csrfToken };
}

export type Section = 'api-keys' | 'webhooks' | 'audit-log';

/** A whole page: the header, with the settings' navigation for a signed-in viewer, and `body`. */
export function layout(title: string, body: Html, viewer: Viewer | null, current?: Section): string {
  const nav = viewer === null ? '' : html`
    <nav aria-label="Settings">
      <a href="${PORTAL_PATHS.apiKeys}"${current === 'api-keys' ? html` aria-current="page"` : ''}>API keys</a>
      <a href="${PORTAL_PATHS.webhooks}"${current === 'webhooks' ? html` aria-current="page"` : ''}>Webhooks</a>
      <a href="${PORTAL_PATHS.auditLog}"${current === 'audit-log' ? html` aria-current="page"` : ''}>Audit log</a>
      <span>${viewer.email} (${viewer.partnerId})</span>
      <form method="post" action="${PORTAL_PATHS.logout}">
        ${csrfField(viewer.csrfToken)}
        <button type="submit">Sign out</button>
      </form>
    </nav>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Partner portal</title>
<link rel="stylesheet" href="${ASSET_PATHS.css}">
</head>
<body>
<header>
  <p class="brand">Partner Catalog · Partner portal</p>
  ${nav}
</header>
<main>
${body}
</main>
</body>
</html>
`.text;
}

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="csrf" value="${token}">`;
}

export function message(text: string | null): Html | null {
  return text === null ? null : html`<p class="message" role="alert">${text}</p>`;
}

export function loginPage(options: { formToken: string; email: string; error: string | null }): string {
  return layout('Sign in', html`
<h1>Sign in</h1>
${message(options.error)}
<form method="post" action="${PORTAL_PATHS.login}">
  ${csrfField(options.formToken)}
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${options.email}">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <p><button type="submit">Sign in</button></p>
</form>
<p>No account yet? An operator of this service sends you an invitation link.</p>`, null);
}

export function invitePage(options: { formToken: string; email: string; action: string; error: string | null }): string {
  return layout('Create your account', html`
<h1>Create your account</h1>
<p>You are invited as an admin, signing in as <strong>${options.email}</strong>. Choose a password of at least 12 characters.</p>
${message(options.error)}
<form method="post" action="${options.action}">
  ${csrfField(options.formToken)}
  <input type="email" name="username" autocomplete="username" value="${options.email}" hidden>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="new-password" minlength="12" required>
  <label for="confirm">Confirm password</label>
  <input id="confirm" name="confirm" type="password" autocomplete="new-password" minlength="12" required>
  <p><button type="submit">Create account</button></p>
</form>`, null);
}

/** A page that only explains: an invitation that cannot be used, a refused form, a missing key. */
export function messagePage(title: string, text: string, viewer: Viewer | null, link?: { href: string; label: string }): string {
  return layout(title, html`
<h1>${title}</h1>
<p>${text}</p>
${link === undefined ? null : html`<p><a href="${link.href}">${link.label}</a></p>`}`, viewer);
}

/** A time in UTC, to the minute unless told (a delivery log's attempts are seconds apart); "Never" for none. */
export function when(date: Date | null, to: 'minute' | 'second' = 'minute'): Html | string {
  if (date === null) return 'Never';
  const iso = date.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, to === 'minute' ? 16 : 19).replace('T', ' ')} UTC</time>`;
}

/** Each mode as the create form offers it. */
const MODE_LABELS: Readonly<Record<KeyMode, string>> = { live: 'Live', test: 'Test' };

/** What a key of each mode reads, in the words the create form and the new key's panel use. */
const MODE_READS: Readonly<Record<KeyMode, string>> = {
  live: 'Reads your catalog.',
  test: 'Reads your sandbox catalog only, never live data: for building and trying out an integration.',
};

function keyRow(key: ApiKeyRecord, viewer: Viewer): Html {
  const path = `${PORTAL_PATHS.apiKeys}/${encodeURIComponent(key.id)}`;
  const actions = key.revokedAt !== null ? null : html`
      <form method="get" action="${path}/revoke"><button type="submit" class="secondary" aria-describedby="key-${key.id}">Revoke</button></form>
      <form method="post" action="${path}/replace">${csrfField(viewer.csrfToken)}<button type="submit" class="secondary" aria-describedby="key-${key.id}">Replace</button></form>`;
  return html`
    <tr>
      <td id="key-${key.id}">${key.label ?? html`<em>No label</em>`} <br><code>${key.id}</code></td>
      <td>${key.mode}</td>
      <td>${when(key.createdAt)}</td>
      <td>${when(key.lastUsedAt)}</td>
      <td><span class="status-${key.revokedAt === null ? 'active' : 'revoked'}">${key.revokedAt === null ? 'active' : 'revoked'}</span></td>
      <td>${actions}</td>
    </tr>`;
}

export function apiKeysPage(options: { viewer: Viewer; keys: readonly ApiKeyRecord[]; newKey: { key: string; id: string; mode: KeyMode } | null; notice: string | null }): string {
  const { viewer, keys, newKey } = options;
  const shown = newKey === null ? null : html`
<section class="new-key" aria-labelledby="new-key-heading">
  <h2 id="new-key-heading">Your new key</h2>
  <p><strong>Copy this key now and keep it secret. It cannot be shown again.</strong> Key id: <code>${newKey.id}</code></p>
  <p>Mode: <strong>${newKey.mode}</strong>. ${MODE_READS[newKey.mode]}</p>
  <label for="new-key">New API key</label>
  <input id="new-key" type="text" readonly value="${newKey.key}" autocomplete="off" spellcheck="false">
  <button type="button" id="copy-key" hidden>Copy key</button>
</section>
<script src="${ASSET_PATHS.js}"></script>`;
  const table = keys.length === 0 ? html`<p>This partner has no API keys yet.</p>` : html`
<div class="table-wrap">
<table>
  <caption class="visually-hidden">Keys of ${viewer.partnerId}</caption>
  <thead><tr><th scope="col">Label</th><th scope="col">Mode</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
  <tbody>${keys.map((key) => keyRow(key, viewer))}</tbody>
</table>
</div>`;
  return layout('API keys', html`
<h1>API keys</h1>
${options.notice === null ? null : html`<p class="notice" role="status">${options.notice}</p>`}
${shown}
<p>Keys let your systems call the Partner Catalog API. A live key reads your catalog; a test key reads your sandbox, never live data. A revoked key is refused from its next request.</p>
<form method="get" action="${PORTAL_PATHS.apiKeys}/new"><button type="submit">Create key</button></form>
${table}`, viewer, 'api-keys');
}

/** One radio button per mode, `chosen` checked, each described by what its keys read. */
function modeChoices(chosen: KeyMode): Html {
  return html`
  <fieldset>
    <legend>Mode</legend>${KEY_MODES.map((mode) => html`
    <div class="choice">
      <input id="mode-${mode}" name="mode" type="radio" value="${mode}"${mode === chosen ? html` checked` : null} aria-describedby="mode-${mode}-hint">
      <label for="mode-${mode}">${MODE_LABELS[mode]}</label>
      <span id="mode-${mode}-hint">${MODE_READS[mode]}</span>
    </div>`)}
  </fieldset>`;
}

/** `mode`: the mode checked, the one chosen when the form is shown again. */
export function newKeyPage(options: { viewer: Viewer; error: string | null; label: string; mode: KeyMode }): string {
  return layout('Create key', html`
<h1>Create key</h1>
${message(options.error)}
<form method="post" action="${PORTAL_PATHS.apiKeys}">
  ${csrfField(options.viewer.csrfToken)}
  <label for="label">Label</label>
  <input id="label" name="label" type="text" maxlength="255" value="${options.label}" aria-describedby="label-hint">
  <p id="label-hint">A name to tell your keys apart, such as the system that uses it.</p>
  ${modeChoices(options.mode)}
  <p><button type="submit">Create</button> <a href="${PORTAL_PATHS.apiKeys}">Cancel</a></p>
</form>`, options.viewer, 'api-keys');
}

export function revokePage(options: { viewer: Viewer; key: ApiKeyRecord }): string {
  const { viewer, key } = options;
  return layout('Revoke key', html`
<h1>Revoke key</h1>
<p>Revoke <strong>${key.label ?? 'the key without a label'}</strong> (<code>${key.id}</code>)? Every request with it is refused from the next one on. This cannot be undone.</p>
<form method="post" action="${PORTAL_PATHS.apiKeys}/${encodeURIComponent(key.id)}/revoke">
  ${csrfField(viewer.csrfToken)}
  <button type="submit" class="danger">Revoke key</button>
  <a href="${PORTAL_PATHS.apiKeys}">Cancel</a>
</form>`, viewer, 'api-keys');
}

/** What an event is about: a key's id, a webhook endpoint's, or nothing (a sign-in). */
function subjectOf(event: AuditEvent) {
  const id = event.keyId ?? event.endpointId ?? null;
  return id === null ? '—' : html`<code>${id}</code>`;
}

export function auditLogPage(options: { viewer: Viewer; events: readonly AuditEvent[] }): string {
  const rows = options.events.map((event) => html`
    <tr><td>${when(event.at)}</td><td>${event.adminEmail ?? 'operator (command line)'}</td><td><code>${event.action}</code></td><td>${subjectOf(event)}</td></tr>`);
  return layout('Audit log', html`
<h1>Audit log</h1>
<p>What admins of ${options.viewer.partnerId} and the service's operators did, newest first.</p>
${rows.length === 0 ? html`<p>Nothing yet.</p>` : html`
<div class="table-wrap">
<table>
  <thead><tr><th scope="col">Time</th><th scope="col">Admin</th><th scope="col">Action</th><th scope="col">Key or endpoint</th></tr></thead>
  <tbody>${rows}</tbody>
</table>
</div>`}`, options.viewer, 'audit-log');
}
