/** Text made safe for HTML element content and double-quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A fragment of HTML that is already safe: only built by `html` below. */
export class Html {
  constructor(readonly text: string) {}
}

type Part = string | number | Html | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined) return '';
  if (part instanceof Html) return part.text;
  if (typeof part === 'string') return escapeHtml(part);
  if (typeof part === 'number') return escapeHtml(String(part));
  return part.map(render).join('');
}

/** A tagged template: every interpolated value is escaped unless it is Html itself. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}
