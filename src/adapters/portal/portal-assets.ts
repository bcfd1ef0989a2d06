/**
 * The portal's only style sheet and script, served by the portal itself, so the content security
 * policy allows `'self'` and nothing inline. Colours keep text at 7:1 or better against its
 * background; focus is always drawn.
 */
export const PORTAL_CSS = `
*, *::before, *::after { box-sizing: border-box; }
html { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #111827; background: #ffffff; }
body { margin: 0; }
header { background: #1e293b; color: #ffffff; padding: 0.75rem 1rem; display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: center; justify-content: space-between; }
header a { color: #ffffff; }
header .brand { font-weight: 700; margin: 0; }
header nav { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; }
header nav form { margin: 0; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; margin: 0.5rem 0 1rem; }
a { color: #1d4ed8; }
a[aria-current="page"] { font-weight: 700; }
label { display: block; font-weight: 600; margin: 0.75rem 0 0.25rem; }
input[type="email"], input[type="password"], input[type="text"] { width: 100%; max-width: 28rem; font: inherit; padding: 0.5rem; border: 2px solid #4b5563; border-radius: 4px; color: #111827; background: #ffffff; }
fieldset { border: 0; padding: 0; margin: 0.75rem 0; min-width: 0; }
legend { font-weight: 600; padding: 0; margin-bottom: 0.25rem; }
.choice { display: grid; grid-template-columns: auto 1fr; gap: 0 0.5rem; align-items: center; margin: 0.5rem 0; }
.choice label { margin: 0; }
.choice span { grid-column: 2; }
input[type="radio"] { width: 1.1rem; height: 1.1rem; margin: 0; accent-color: #1d4ed8; }
input[readonly] { background: #f3f4f6; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; max-width: 100%; }
button, .button { display: inline-block; font: inherit; font-weight: 600; padding: 0.45rem 0.9rem; border-radius: 4px; border: 2px solid #1d4ed8; background: #1d4ed8; color: #ffffff; cursor: pointer; text-decoration: none; margin: 0.25rem 0; }
button.secondary, .button.secondary { background: #ffffff; color: #1d4ed8; }
button.danger { background: #b91c1c; border-color: #b91c1c; }
header button { background: #ffffff; color: #1e293b; border-color: #ffffff; }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.message { border-left: 4px solid #b91c1c; background: #fef2f2; padding: 0.5rem 0.75rem; margin: 1rem 0; }
.notice { border-left: 4px solid #1d4ed8; background: #eff6ff; padding: 0.5rem 0.75rem; margin: 1rem 0; }
.new-key { border: 2px solid #047857; background: #ecfdf5; padding: 0.75rem 1rem; margin: 1rem 0; border-radius: 4px; }
.table-wrap { overflow-x: auto; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
table { border-collapse: collapse; width: 100%; margin: 1rem 0; }
th, td { text-align: left; padding: 0.5rem; border-bottom: 1px solid #d1d5db; vertical-align: top; }
td form { display: inline; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; word-break: break-all; }
.status-revoked { color: #991b1b; font-weight: 600; }
.status-active { color: #065f46; font-weight: 600; }
@media (max-width: 40rem) {
  th, td { padding: 0.4rem 0.25rem; font-size: 0.95rem; }
}
`;

/** The one enhancement: a button that copies the new key; without JavaScript it stays hidden. */
export const PORTAL_JS = `
(function () {
  var button = document.getElementById('copy-key');
  var field = document.getElementById('new-key');
  if (!button || !field || !navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener('click', function () {
    navigator.clipboard.writeText(field.value).then(function () { button.textContent = 'Copied'; });
  });
})();
`;
