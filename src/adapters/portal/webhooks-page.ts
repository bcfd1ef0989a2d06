import type { WebhookEndpointListing } from '../../application/webhooks/list-webhook-endpoints.js';
import type { DeliveryLogEntry } from '../../application/webhooks/webhook-outbox.js';
import { html, type Html } from './html.js';
import { csrfField, layout, message, when, type Viewer } from './portal-pages.js';
import { PORTAL_PATHS } from './portal-paths.js';

/** An endpoint as its row and its delivery log show it. */
export interface EndpointView {
  readonly endpoint: WebhookEndpointListing;
  /** Its last attempts, newest first. */
  readonly log: readonly DeliveryLogEntry[];
}

/** What the "Add endpoint" form shows: what was typed, and why it was refused. */
export interface AddEndpointForm {
  readonly url: string;
  readonly description: string;
  readonly error: string | null;
}

export const EMPTY_ADD_FORM: AddEndpointForm = { url: '', description: '', error: null };

export function endpointPath(endpointId: string): string {
  return `${PORTAL_PATHS.webhooks}/${encodeURIComponent(endpointId)}`;
}

/** What an attempt came to, in words: the answer's status, or why none came. */
export function outcomeOf(entry: Pick<DeliveryLogEntry, 'status' | 'error'>): string {
  if (entry.status !== null) return `${entry.status >= 200 && entry.status < 300 ? 'delivered' : 'failed'} (HTTP ${entry.status})`;
  if (entry.error === 'endpoint_disabled') return 'not sent (endpoint disabled)';
  return `failed (${(entry.error ?? 'no answer').replaceAll('_', ' ')})`;
}

/** A button alone in a POST form of its own, with the session's CSRF token. */
function postButton(viewer: Viewer, action: string, label: string, describedBy: string, kind = 'secondary'): Html {
  return html`<form method="post" action="${action}">${csrfField(viewer.csrfToken)}<button type="submit" class="${kind}" aria-describedby="${describedBy}">${label}</button></form>`;
}

function endpointRow(view: EndpointView, viewer: Viewer): Html {
  const { endpoint, log } = view;
  const path = endpointPath(endpoint.id);
  const cell = `endpoint-${endpoint.id}`;
  const last = log[0];
  return html`
    <tr>
      <td id="${cell}"><code>${endpoint.url}</code><br><small>Id <code>${endpoint.id}</code></small></td>
      <td>${endpoint.description ?? html`<em>None</em>`}</td>
      <td><span class="status-${endpoint.status === 'enabled' ? 'active' : 'revoked'}">${endpoint.status}</span></td>
      <td>${last === undefined ? 'Never' : html`${when(last.at, 'second')}<br>${outcomeOf(last)}`}</td>
      <td>
        ${postButton(viewer, `${path}/test`, 'Send test event', cell)}
        ${postButton(viewer, `${path}/secret`, 'Reveal secret', cell)}
        ${postButton(viewer, `${path}/rotate`, 'Rotate secret', cell)}
        ${endpoint.status === 'enabled' ? postButton(viewer, `${path}/disable`, 'Disable', cell) : postButton(viewer, `${path}/enable`, 'Enable', cell)}
        <form method="get" action="${path}/delete"><button type="submit" class="secondary" aria-describedby="${cell}">Delete</button></form>
      </td>
    </tr>`;
}

function deliveryLog(view: EndpointView, viewer: Viewer): Html {
  const { endpoint, log } = view;
  const heading = `log-${endpoint.id}`;
  const resendable = new Set<string>();
  const rows = log.map((entry, i) => {
    const cell = `attempt-${endpoint.id}-${i}`;
    // One "Resend" per message, on its newest attempt.
    const first = !resendable.has(entry.messageId);
    resendable.add(entry.messageId);
    return html`
    <tr>
      <td>${when(entry.at, 'second')}</td>
      <td id="${cell}">${entry.type}<br><small><code>${entry.messageId}</code></small></td>
      <td>${entry.attempt}${entry.resend ? html`<br><small>resend</small>` : null}</td>
      <td>${outcomeOf(entry)}</td>
      <td>${entry.durationMs} ms</td>
      <td>${first ? postButton(viewer, `${endpointPath(endpoint.id)}/messages/${encodeURIComponent(entry.messageId)}/resend`, 'Resend', cell) : null}</td>
    </tr>`;
  });
  return html`
<section aria-labelledby="${heading}">
<h3 id="${heading}">Delivery log of <code>${endpoint.url}</code></h3>
${rows.length === 0 ? html`<p>No attempts yet.</p>` : html`
<div class="table-wrap">
<table>
  <caption class="visually-hidden">Attempts to ${endpoint.url}, newest first</caption>
  <thead><tr><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Attempt</th><th scope="col">Outcome</th><th scope="col">Duration</th><th scope="col">Actions</th></tr></thead>
  <tbody>${rows}</tbody>
</table>
</div>`}
</section>`;
}

/** What the page says endpoints may be: what this deployment's URL check takes. */
function acceptedUrls(allowPrivateTargets: boolean): { readonly intro: string; readonly hint: string } {
  if (!allowPrivateTargets) {
    return { intro: 'Endpoints are HTTPS URLs of public hosts; at most 10.', hint: 'An https URL of your own receiver, without a user name or password in it.' };
  }
  return {
    intro: 'Endpoints are HTTPS or plain HTTP URLs, and may name this machine or a private network: this deployment is set up for development or testing. At most 10.',
    hint: 'An https or http URL of your own receiver, public or private, without a user name or password in it.',
  };
}

export function webhooksPage(options: {
  viewer: Viewer;
  /** Whether endpoints may be http and name non-public addresses (WEBHOOK_ALLOW_PRIVATE_TARGETS). */
  allowPrivateTargets: boolean;
  endpoints: readonly EndpointView[];
  /** A secret revealed by the POST before this page load, shown on this one load only. */
  revealed: { endpoint: WebhookEndpointListing; secret: string } | null;
  notice: string | null;
  add: AddEndpointForm;
}): string {
  const { viewer, endpoints, revealed, add } = options;
  const accepted = acceptedUrls(options.allowPrivateTargets);
  const shown = revealed === null ? null : html`
<section class="new-key" aria-labelledby="secret-heading">
  <h2 id="secret-heading">Signing secret</h2>
  <p>Messages to <code>${revealed.endpoint.url}</code> are signed with this secret. <strong>Keep it secret.</strong> It is not on this page when you reload it; "Reveal secret" shows it again.</p>
  <label for="webhook-secret">Signing secret</label>
  <input id="webhook-secret" type="text" readonly value="${revealed.secret}" autocomplete="off" spellcheck="false">
</section>`;
  const table = endpoints.length === 0 ? html`<p>This partner has no webhook endpoints yet.</p>` : html`
<div class="table-wrap">
<table>
  <caption class="visually-hidden">Webhook endpoints of ${viewer.partnerId}</caption>
  <thead><tr><th scope="col">URL</th><th scope="col">Description</th><th scope="col">Status</th><th scope="col">Last delivery</th><th scope="col">Actions</th></tr></thead>
  <tbody>${endpoints.map((view) => endpointRow(view, viewer))}</tbody>
</table>
</div>`;
  return layout('Webhooks', html`
<h1>Webhooks</h1>
${options.notice === null ? null : html`<p class="notice" role="status">${options.notice}</p>`}
${shown}
<p>After each change to your catalog, every enabled endpoint receives a signed <code>catalog.changed</code> message saying what changed. ${accepted.intro}</p>
${table}
<section aria-labelledby="add-heading">
<h2 id="add-heading">Add endpoint</h2>
${message(add.error)}
<form method="post" action="${PORTAL_PATHS.webhooks}">
  ${csrfField(viewer.csrfToken)}
  <label for="endpoint-url">Endpoint URL</label>
  <input id="endpoint-url" name="url" type="text" inputmode="url" autocomplete="url" spellcheck="false" required value="${add.url}" aria-describedby="endpoint-url-hint">
  <p id="endpoint-url-hint">${accepted.hint}</p>
  <label for="endpoint-description">Description</label>
  <input id="endpoint-description" name="description" type="text" maxlength="255" value="${add.description}">
  <p><button type="submit">Add</button></p>
</form>
</section>
${endpoints.length === 0 ? null : html`
<h2>Delivery logs</h2>
<p>Each endpoint's last 100 attempts, newest first. "Resend" sends a message again with the same <code>webhook-id</code>; its attempts are numbered on from the message's earlier ones and marked "resend".</p>
${endpoints.map((view) => deliveryLog(view, viewer))}`}`, viewer, 'webhooks');
}

export function deleteEndpointPage(options: { viewer: Viewer; endpoint: WebhookEndpointListing }): string {
  const { viewer, endpoint } = options;
  return layout('Delete endpoint', html`
<h1>Delete endpoint</h1>
<p>Delete the endpoint <code>${endpoint.url}</code> (<code>${endpoint.id}</code>)? It gets no more messages, and its secret and delivery log are gone. This cannot be undone.</p>
<form method="post" action="${endpointPath(endpoint.id)}/delete">
  ${csrfField(viewer.csrfToken)}
  <button type="submit" class="danger">Delete endpoint</button>
  <a href="${PORTAL_PATHS.webhooks}">Cancel</a>
</form>`, viewer, 'webhooks');
}
