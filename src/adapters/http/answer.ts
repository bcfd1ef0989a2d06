/** Headers as node:http writes them: name, value, name, value... (one array, no pair objects). */
export type HeaderList = readonly string[];

/** What the service answers, framework-free: status, headers, and the body's bytes. */
export interface Answer {
  readonly status: number;
  readonly headers: HeaderList;
  /** Absent for an answer with no body (304); a HEAD request's body is dropped when written. */
  readonly body?: Buffer;
}

export const JSON_TYPE = 'application/json; charset=utf-8';

/** An answer with a body: the bytes with their type and length. */
export function bodyAnswer(status: number, type: string, body: Buffer, headers: HeaderList = []): Answer {
  return { status, headers: [...headers, 'Content-Type', type, 'Content-Length', String(body.length)], body };
}

/** A JSON answer. */
export function jsonAnswer(status: number, body: Buffer | string, headers: HeaderList = []): Answer {
  return bodyAnswer(status, JSON_TYPE, typeof body === 'string' ? Buffer.from(body, 'utf8') : body, headers);
}
