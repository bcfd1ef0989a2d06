import type { IncomingMessage } from 'node:http';

/** A portal form holds a few short fields; anything larger is refused before it is read whole. */
export const MAX_FORM_BYTES = 8 * 1024;

export class FormError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
    this.name = 'FormError';
  }
}

/**
 * Reads an `application/x-www-form-urlencoded` body of at most MAX_FORM_BYTES, taken exactly or
 * refused with 400: bytes that are not UTF-8 (raw or percent-encoded) and a field sent twice are
 * refused by name, never replaced by U+FFFD or settled by keeping one of the two.
 */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new FormError(415, 'Forms are sent as application/x-www-form-urlencoded.');
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_FORM_BYTES) throw new FormError(413, 'The form is too large.');
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_FORM_BYTES) throw new FormError(413, 'The form is too large.');
      chunks.push(chunk);
    }
  } catch (error) {
    // A client that goes away part-way is its own doing, not a fault of ours to log.
    if (error instanceof FormError || !req.destroyed) throw error;
    throw new FormError(400, 'The form did not arrive whole.');
  }
  return parseForm(Buffer.concat(chunks));
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function parseForm(body: Buffer): URLSearchParams {
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw new FormError(400, 'The form is not valid UTF-8.');
  }
  const form = new URLSearchParams();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const cut = pair.indexOf('=');
    const [rawName, rawValue] = cut === -1 ? [pair, ''] : [pair.slice(0, cut), pair.slice(cut + 1)];
    const name = decodeField(rawName, null);
    if (form.has(name)) throw new FormError(400, `The form has the field "${printable(name)}" more than once.`);
    form.append(name, decodeField(rawValue, name));
  }
  return form;
}

/** A name or value as the urlencoded format spells it (`+` a space, `%XX` a byte), refused unless its bytes are UTF-8. */
function decodeField(raw: string, name: string | null): string {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    throw new FormError(400, name === null ? 'A field name of the form is not valid URL-encoded UTF-8.' : `The form's field "${printable(name)}" is not valid URL-encoded UTF-8.`);
  }
}

/** A field name as an error page may repeat it: at most 40 characters, no control characters. */
function printable(name: string): string {
  return name.replace(/\p{Cc}/gu, '?').slice(0, 40);
}
