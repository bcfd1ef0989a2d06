/** What went wrong, in words that hold no statement text, value or server message. */
export type DatabaseFailure =
  | 'no connection in time'
  | 'no answer in time'
  | 'queue full'
  | 'connection failed'
  | 'query interrupted'
  | 'statement failed'
  | 'pool closed'
  /** The server refuses writes (read_only): a replica, or a former primary the address still leads to. */
  | 'read only'
  /** A replica had not applied a change's position within DATABASE_REPLICA_WAIT_MS: its read goes to the primary. */
  | 'replica behind';

/**
 * The only error the MySQL adapter lets out. A driver error carries the SQL as sent (with its
 * values interpolated) and the server's message, which can quote values: neither is kept, and
 * the driver error is not kept as a cause either, since loggers print causes. A failed TLS
 * handshake's message is Node's, not the server's, and is kept: it says which check failed.
 */
export class DatabaseError extends Error {
  override readonly name = 'DatabaseError';
  /** The database cannot be reached now, rather than refusing a statement (isStorageUnavailable). */
  readonly storageUnavailable: boolean;

  constructor(
    readonly failure: DatabaseFailure,
    /** The driver's error code, such as `ER_QUERY_INTERRUPTED` or `ECONNREFUSED`. */
    readonly code?: string,
    /** Why the TLS handshake failed, in Node's words (a certificate that does not verify, and why): never the server's. */
    readonly tlsReason?: string,
  ) {
    super(`database: ${failure}${code === undefined ? '' : ` (${code}${tlsReason === undefined ? '' : `: ${tlsReason}`})`}`);
    this.storageUnavailable = failure !== 'statement failed';
  }
}

/** mysql2's code for a TLS handshake that failed; it replaces Node's, whose reason stays in the message. */
const TLS_HANDSHAKE_FAILED = 'HANDSHAKE_SSL_ERROR';

/** Whether the server's certificate did not verify (no trusted authority signed it, or not for this host): no wait mends it. */
export function isCertificateRefusal(error: DatabaseError): boolean {
  return error.code === TLS_HANDSHAKE_FAILED && /certificate/i.test(error.tlsReason ?? '');
}

/** MariaDB's and MySQL's refusals of a write on a read-only server. */
const READ_ONLY_CODES = new Set(['ER_OPTION_PREVENTS_STATEMENT', 'ER_READ_ONLY_MODE']);

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'PROTOCOL_CONNECTION_LOST']);

/** A driver error as a DatabaseError: its kind and code only, and for a failed TLS handshake Node's reason. */
export function databaseErrorFrom(error: unknown): DatabaseError {
  if (error instanceof DatabaseError) return error;
  const fields = typeof error === 'object' && error !== null ? (error as { code?: unknown; fatal?: unknown; message?: unknown }) : {};
  // Only a code shaped like one: whatever else sits in `code` is not repeated.
  const code = typeof fields.code === 'string' && /^[A-Z][A-Z0-9_]{1,63}$/.test(fields.code) ? fields.code : undefined;
  if (code === 'ER_QUERY_INTERRUPTED') return new DatabaseError('query interrupted', code);
  if (code !== undefined && READ_ONLY_CODES.has(code)) return new DatabaseError('read only', code);
  if (code === TLS_HANDSHAKE_FAILED && typeof fields.message === 'string') return new DatabaseError('connection failed', code, fields.message);
  if (fields.fatal === true || (code !== undefined && CONNECTION_CODES.has(code))) return new DatabaseError('connection failed', code);
  return new DatabaseError('statement failed', code);
}
