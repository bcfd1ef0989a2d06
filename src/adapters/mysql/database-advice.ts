import { DatabaseError, isCertificateRefusal } from './database-error.js';

/** How an operator brings the schema up to date (README, running on MySQL). */
export const MIGRATE_COMMAND = 'npm run cli -- migrate';

/** The database a `mysql://` URL names, and where: never its password. */
export interface DatabaseTarget {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
}

export function databaseTarget(url: string): DatabaseTarget | null {
  if (!URL.canParse(url)) return null;
  const parsed = new URL(url);
  const user = decoded(parsed.username);
  const database = decoded(parsed.pathname.replace(/^\//, ''));
  if (user === null || database === null) return null;
  return { host: parsed.hostname, port: parsed.port === '' ? 3306 : Number(parsed.port), user, database };
}

/**
 * A URL part percent-decoded; null when its escapes are malformed. The configuration refuses such a
 * URL, naming DATABASE_URL; advice on the failure that refusal is must not throw in its place.
 */
function decoded(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

/** The failure the MySQL adapter let out, wherever it sits in the chain of causes. */
export function databaseErrorIn(error: unknown): DatabaseError | null {
  for (let at = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    if (at instanceof DatabaseError) return at;
  }
  return null;
}

/** Failures that do not pass: a start or a command that meets one stops, saying what to change. */
const LASTING = new Set([
  'ER_BAD_DB_ERROR', 'ER_ACCESS_DENIED_ERROR', 'ER_DBACCESS_DENIED_ERROR', 'ER_HOST_NOT_PRIVILEGED', 'ER_NO_SUCH_TABLE', 'ER_BAD_FIELD_ERROR',
  'ER_SECURE_TRANSPORT_REQUIRED', 'HANDSHAKE_NO_SSL_SUPPORT',
]);

export function isLastingDatabaseFailure(error: DatabaseError): boolean {
  return isCertificateRefusal(error) || (error.code !== undefined && LASTING.has(error.code));
}

/**
 * What an operator reads when the database DATABASE_URL names fails a command or the start: what is
 * wrong, naming the database, the server and the setting, and what to do; never the password. Null
 * when the error is none the MySQL adapter let out, or one with nothing to add. `overTls`: whether
 * the connections used TLS (DATABASE_TLS). `setting`: where the URL came from.
 */
export function databaseAdvice(error: unknown, url: string | null | undefined, overTls: boolean, setting = 'DATABASE_URL'): string | null {
  const failure = databaseErrorIn(error);
  if (failure === null) return null;
  const target = url === null || url === undefined ? null : databaseTarget(url);
  if (target === null) return null;
  const { host, user, database } = target;
  const server = `${host.includes(':') ? `[${host}]` : host}:${target.port}`;
  const named = `database \`${database}\` on ${server}`;
  const code = failure.code ?? failure.failure;
  const tlsCause = `${code}${failure.tlsReason === undefined ? '' : `: ${failure.tlsReason}`}`;
  switch (code) {
    case 'ER_BAD_DB_ERROR':
      return `${setting} names ${named}, which does not exist (${code}). Create it, then create its tables:\n` +
        `  CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;\n  ${MIGRATE_COMMAND}`;
    case 'ER_ACCESS_DENIED_ERROR':
      // MariaDB refuses a login without TLS in these very words when it requires secure transport (MySQL says so: below).
      return `${setting}: the server at ${server} refused user "${user}" (${code}): the user or the password in ${setting} is wrong, ` +
        `or the user may not connect from this machine${overTls ? '' : ', or the server takes TLS connections only: set DATABASE_TLS=true'}`;
    case 'ER_SECURE_TRANSPORT_REQUIRED':
      return `DATABASE_TLS: the server at ${server} takes TLS connections only (${code}): set DATABASE_TLS=true, ` +
        'and DATABASE_TLS_CA_FILE if a private authority signed its certificate';
    case 'HANDSHAKE_NO_SSL_SUPPORT':
      return `DATABASE_TLS: the server at ${server} does not offer TLS (${code}): turn TLS on at the server (ssl_cert, ssl_key), ` +
        `or correct the host and port in ${setting} if they name another server`;
    case 'HANDSHAKE_SSL_ERROR':
      return isCertificateRefusal(failure)
        ? `${setting}: the certificate of the server at ${server} does not verify (${tlsCause}): no authority this instance ` +
          `trusts signed it, or it is not for this host: name the PEM file of the authority that signed it in DATABASE_TLS_CA_FILE, or correct the host in ${setting}`
        : `${setting}: the TLS connection to ${server} failed (${tlsCause}): run the command again once the server answers`;
    case 'ER_DBACCESS_DENIED_ERROR':
      return `${setting}: user "${user}" may not use ${named} (${code}). Grant it, or name a database the user may use:\n` +
        `  GRANT ALL PRIVILEGES ON \`${database}\`.* TO '${user}'@'<the host it connects from>';`;
    case 'ER_TABLEACCESS_DENIED_ERROR':
    case 'ER_SPECIFIC_ACCESS_DENIED_ERROR':
      return `${setting}: user "${user}" lacks a privilege this command needs on ${named} (${code}); migrate creates and alters tables, ` +
        `the other commands read and write rows. Grant them:\n  GRANT ALL PRIVILEGES ON \`${database}\`.* TO '${user}'@'<the host it connects from>';`;
    case 'ER_HOST_NOT_PRIVILEGED':
      return `${setting}: the server at ${server} lets no user connect from this machine's address (${code}); create "${user}" for that address on the server`;
    case 'ER_NO_SUCH_TABLE':
    case 'ER_BAD_FIELD_ERROR':
      return setting === 'DATABASE_URL'
        ? `${named} has no schema yet, or an older one than this version needs (${code}). Bring it up to date with the same DATABASE_URL:\n  ${MIGRATE_COMMAND}`
        : `${setting}: ${named} has no schema yet, or an older one than this version needs (${code}): migrate the primary (DATABASE_URL), and see that this replica applies what the primary writes`;
    case 'ECONNREFUSED':
      return `${setting}: nothing accepts connections at ${server} (${code}): start MariaDB or MySQL there, or correct the host and port in ${setting}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${setting}: the host name "${host}" does not resolve (${code}): correct the host in ${setting}`;
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'no connection in time':
      return `${setting}: ${server} did not answer (${code}): check the host and port in ${setting}, and that no firewall stands between this machine and the server`;
    case 'ER_OPTION_PREVENTS_STATEMENT':
    case 'ER_READ_ONLY_MODE':
      return `${setting}: the server at ${server} accepts no writes (${code}): it is a replica, or a former primary the address still leads to. ` +
        'DATABASE_URL must name the primary; after a failover, run the command again once the address leads to the new one';
    case 'ECONNRESET':
    case 'PROTOCOL_CONNECTION_LOST':
      return `${setting}: the connection to ${server} was lost (${code}): run the command again once the server answers`;
    default:
      return null;
  }
}
