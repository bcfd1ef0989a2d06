import { hashApiKey, isWellFormedApiKey, type Principal } from '../domain/api-key.js';
import { DomainError } from '../domain/errors.js';
import type { ApiKeyStore } from './ports/api-key-store.js';

/** The two headers a key may arrive in, as received (absent when not sent). */
export interface KeyCredentials {
  readonly authorization?: string | undefined;
  readonly apiKey?: string | undefined;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Resolves the calling partner from the request's key (spec section 5, decisions.md section 2). */
export class AuthenticateKey {
  constructor(private readonly keys: ApiKeyStore) {}

  async execute(credentials: KeyCredentials): Promise<Principal> {
    const key = presentedKey(credentials);
    // A key of the wrong shape cannot have been issued: refuse it without a storage read.
    const principal = isWellFormedApiKey(key) ? await this.keys.findActiveByHash(hashApiKey(key)) : null;
    if (principal === null) throw new DomainError('invalid_api_key', 'The API key is not valid or has been revoked.');
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
