import { hashApiKey, isWellFormedApiKey, modeOfKey, type Principal } from '../../domain/api-key.js';
import { DomainError, InvalidApiKey, TooManyFailedAuthentications } from '../../domain/errors.js';
import type { ApiKeyStore } from './api-key-store.js';
import type { AuthFailureGuard } from './auth-failure-guard.js';
import type { KeyUsage } from './key-usage.js';

/** The two headers a key may arrive in, as received (absent when not sent), and who sent them. */
export interface KeyCredentials {
  readonly authorization?: string | undefined;
  readonly apiKey?: string | undefined;
  /** The client's address; without one, failed authentications are not counted. */
  readonly clientAddress?: string | undefined;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Lets every request through: for callers with no address to account failures to. */
const UNGUARDED: AuthFailureGuard = { secondsToWait: () => 0, failed: () => undefined, succeeded: () => undefined };

/** Resolves the calling partner from the request's key (docs/api.md, authentication; docs/decisions.md, API keys). */
export class AuthenticateKey {
  constructor(
    private readonly keys: ApiKeyStore,
    private readonly guard: AuthFailureGuard = UNGUARDED,
    /** Told of each key that authenticates, in memory, for "last used". */
    private readonly usage?: KeyUsage,
  ) {}

  async execute(credentials: KeyCredentials): Promise<Principal> {
    const address = credentials.clientAddress;
    let presented: { key: string } | { error: DomainError };
    try {
      presented = { key: presentedKey(credentials) };
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      presented = { error };
    }
    // A key of the wrong shape cannot have been issued: it is refused without a storage read.
    const hash = 'key' in presented && isWellFormedApiKey(presented.key) ? hashApiKey(presented.key) : null;
    if (address !== undefined) {
      const wait = this.guard.secondsToWait(address, hash);
      if (wait > 0) throw new TooManyFailedAuthentications(wait);
    }
    const found = hash === null ? null : await this.keys.findActiveByHash(hash);
    // A key is taken only with its own mode's prefix: a test key never reads live data, whatever a catalog file declared.
    const principal = found !== null && 'key' in presented && found.mode === modeOfKey(presented.key) ? found : null;
    if (principal === null || hash === null) {
      if (address !== undefined) this.guard.failed(address);
      if ('error' in presented) throw presented.error;
      throw new InvalidApiKey();
    }
    if (address !== undefined) this.guard.succeeded(hash);
    this.usage?.used(principal.keyId);
    return principal;
  }
}

function presentedKey({ authorization, apiKey }: KeyCredentials): string {
  if (authorization !== undefined && authorization.trim() !== '') {
    const token = BEARER.exec(authorization)?.[1];
    if (token === undefined) {
      throw new DomainError('invalid_api_key', 'The Authorization header must be "Bearer <API key>".');
    }
    return token;
  }
  if (apiKey !== undefined && apiKey.trim() !== '') return apiKey.trim();
  throw new DomainError(
    'missing_api_key',
    'An API key is required, in "Authorization: Bearer <key>" or in "X-API-Key: <key>".',
  );
}
