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

/** Reads an `application/x-www-form-urlencoded` body of at most MAX_FORM_BYTES. */
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
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
