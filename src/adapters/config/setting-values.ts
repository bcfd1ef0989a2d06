/** The environment the settings are read from. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A bad setting; its message is the one line an operator sees, naming the variable. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

/** The variable's value, or null when unset or blank. */
export function text(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? null : value;
}

export function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = text(env, name);
  if (value === null) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(name, `must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}`);
}

/** `true` or `false`, false when unset. */
export function flag(env: Env, name: string): boolean {
  return oneOf(env, name, ['true', 'false'] as const, 'false') === 'true';
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = text(env, name);
  if (value === null) return fallback;
  const n = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}; got ${JSON.stringify(value)}`);
  }
  return n;
}

/** An absolute http(s) URL without a trailing slash; null when unset. */
export function httpUrl(env: Env, name: string): string | null {
  const value = text(env, name);
  if (value === null) return null;
  if (!URL.canParse(value) || !['http:', 'https:'].includes(new URL(value).protocol)) {
    throw new ConfigError(name, `must be an absolute http:// or https:// URL; got ${JSON.stringify(value)}`);
  }
  return value.replace(/\/+$/, '');
}

/** Characters at least of a secret setting: a random one of 32 characters or more cannot be guessed. */
export const MIN_SECRET_LENGTH = 32;

/** A secret, never echoed; null when unset. */
export function secret(env: Env, name: string, minLength: number): string | null {
  const value = text(env, name);
  if (value === null) return null;
  if (value.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters (openssl rand -base64 48 makes one)`);
  return value;
}

/** What each kind of connection URL looks like, for the message that refuses one. */
const URL_SHAPES: Readonly<Record<string, string>> = {
  'mysql:': 'mysql://user:password@host:3306/database',
  'redis:': 'redis://host:6379 (redis://:password@host:6379 with a password, rediss:// for TLS)',
};

/**
 * The parts of a connection URL its driver decodes (decodeURIComponent), as an operator calls them.
 * The URL parser lets a `%` that starts no escape through, and the decode would then stop the start
 * or the command with "URI malformed", naming no setting.
 */
const DECODED_PARTS = [['username', 'user name'], ['password', 'password'], ['hostname', 'host'], ['pathname', 'path']] as const;

/** A `%` not followed by two hexadecimal digits. */
const LONE_PERCENT = /%(?![0-9A-Fa-f]{2})/;

/** A connection URL of one of the protocols, the first naming the shape an error shows; null when unset. */
export function optionalUrl(env: Env, name: string, protocols: string | readonly string[]): string | null {
  const value = text(env, name);
  if (value === null) return null;
  const allowed = typeof protocols === 'string' ? [protocols] : protocols;
  const protocol = allowed[0]!;
  if (!URL.canParse(value) || !allowed.includes(new URL(value).protocol)) {
    // Never echo the value: a connection URL may hold a password.
    throw new ConfigError(name, `must be a ${protocol}// URL, as ${URL_SHAPES[protocol] ?? `${protocol}//host`}`);
  }
  const url = new URL(value);
  for (const [part, called] of DECODED_PARTS) {
    const problem = escapeProblem(url[part]);
    // Which part, never what it holds: the password's neighbours would give it away.
    if (problem !== null) throw new ConfigError(name, `the ${called} ${problem}`);
  }
  return value;
}

export function requiredUrl(env: Env, name: string, protocols: string | readonly string[], because: string): string {
  const value = optionalUrl(env, name, protocols);
  if (value === null) throw new ConfigError(name, `is required with ${because}`);
  return value;
}

/** What is wrong with a part's percent-escapes, as the rest of a message; null when it decodes. */
function escapeProblem(part: string): string | null {
  if (LONE_PERCENT.test(part)) return 'holds a % not followed by two hexadecimal digits: write a literal % as %25';
  try {
    decodeURIComponent(part);
    return null;
  } catch {
    return 'holds percent-escapes that do not decode to UTF-8 text (such as %ff alone): encode it as encodeURIComponent does, a literal % as %25';
  }
}
