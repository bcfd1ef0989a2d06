import { connect } from 'node:net';

/** The first final (non-1xx) HTTP response read back from a raw socket, parsed just enough to check it. */
export interface RawResponse {
  readonly status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
  /** Everything the server wrote, for failure messages. */
  readonly raw: Buffer;
}

/**
 * Writes `request` byte for byte (no client-side validation at all), half-closes, and
 * collects what the server writes until it closes or `timeoutMs` passes. Rejects when
 * nothing parsable came back: a silent close or a timeout is a failure, not an answer.
 */
export function rawRequest(url: string, request: Buffer, options: { timeoutMs?: number; head?: boolean } = {}): Promise<RawResponse> {
  const { timeoutMs = 5_000, head = false } = options;
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true });
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) {
        reject(error);
        return;
      }
      const raw = Buffer.concat(chunks);
      try {
        resolve(parseResponse(raw, head));
      } catch (parseError) {
        reject(new Error(`${(parseError as Error).message}; server wrote ${JSON.stringify(raw.toString('latin1').slice(0, 500))}`));
      }
    };
    const timer = setTimeout(() => {
      finish(new Error(`no complete answer within ${timeoutMs} ms; got ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 500))}`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // Stop at the end of the first response; a server may keep the socket open.
      if (completeLength(Buffer.concat(chunks), head) !== null) finish();
    });
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    // A reset after the answer was written still leaves the answer to check.
    socket.on('error', (error) => (chunks.length > 0 ? finish() : finish(error)));
    socket.write(request, () => socket.end());
  });
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** Where the first final response starts: after any interim 1xx responses (100 Continue). */
function finalStart(data: Buffer): number | null {
  let start = 0;
  for (;;) {
    if (data.length - start < 12) return null;
    if (!/^HTTP\/1\.[01] 1\d\d /.test(data.subarray(start, start + 13).toString('latin1'))) return start;
    const end = data.indexOf(HEAD_END, start);
    if (end < 0) return null;
    start = end + HEAD_END.length;
  }
}

/** Bytes up to the end of the first final response, once all of it has arrived (Content-Length framing only). */
function completeLength(data: Buffer, head: boolean): number | null {
  const start = finalStart(data);
  if (start === null) return null;
  const headEnd = data.indexOf(HEAD_END, start);
  if (headEnd < 0) return null;
  if (head) return headEnd + HEAD_END.length;
  const lengthLine = /\r\ncontent-length:[ \t]*(\d+)/i.exec(data.subarray(start, headEnd).toString('latin1'));
  if (lengthLine === null) return null;
  const total = headEnd + HEAD_END.length + Number(lengthLine[1]);
  return data.length >= total ? total : null;
}

/** `head`: the answer to a HEAD has no body, whatever its Content-Length says; bytes after its head are not its own. */
function parseResponse(raw: Buffer, head: boolean): RawResponse {
  const start = finalStart(raw) ?? 0;
  const headEnd = raw.indexOf(HEAD_END, start);
  if (headEnd < 0) throw new Error('no complete response head');
  const [statusLine = '', ...headerLines] = raw.subarray(start, headEnd).toString('latin1').split('\r\n');
  const statusMatch = /^HTTP\/1\.[01] (\d{3}) /.exec(statusLine);
  if (statusMatch === null) throw new Error(`not an HTTP status line: ${JSON.stringify(statusLine)}`);
  const headers = new Map<string, string>();
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`malformed response header line: ${JSON.stringify(line)}`);
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  const length = headers.get('content-length');
  const bodyStart = headEnd + HEAD_END.length;
  const body = head ? Buffer.alloc(0) : length === undefined ? raw.subarray(bodyStart) : raw.subarray(bodyStart, bodyStart + Number(length));
  return { status: Number(statusMatch[1]), headers, body, raw };
}
