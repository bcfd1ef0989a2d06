/** Headers as node:http writes them: name, value, name, value... (one array, no pair objects). */
export type HeaderList = readonly string[];

/** What the service answers, framework-free: status, headers, and the body's bytes. */
export interface Answer {
  readonly status: number;
  readonly headers: HeaderList;
  /** Absent for an answer with no body (304); a HEAD request's body is dropped when written. */
  readonly body?: Buffer;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** A JSON answer: the body's bytes with their type and length. */
export function jsonAnswer(status: number, body: Buffer | string, headers: HeaderList = []): Answer {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return { status, headers: [...headers, 'Content-Type', JSON_TYPE, 'Content-Length', String(bytes.length)], body: bytes };
}
