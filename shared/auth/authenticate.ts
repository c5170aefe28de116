import { CREDENTIAL_CACHE_MS } from '../config.js';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import type { Scope } from '../routes.js';
import { getCredential, type Credential } from '../store/credentials-repo.js';
import { parseToken, isSecretMatching } from './tokens.js';

// Resolved credentials are kept a few seconds per process: a warm Lambda then answers without a DynamoDB
// read, and a revocation still takes effect within CREDENTIAL_CACHE_MS (the contract allows 10 s).
const cache = new Map<string, { credential: Credential | null; until: number }>();
const MAX_CACHED_TOKENS = 10_000;

/** Tokens kept (for the test that bounds the cache). */
export function credentialCacheSize(): number {
  return cache.size;
}

export async function authenticate(authorization: string | undefined, now = Date.now()): Promise<Credential> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) throw new UnauthorizedError('Send the API key as "Authorization: Bearer <key>"');
  const token = match[1]!;

  const cached = cache.get(token);
  const credential = cached && cached.until > now ? cached.credential : await lookUp(token, now);
  if (!credential || credential.revokedAt) throw new UnauthorizedError('Unknown or revoked API key');
  return credential;
}

async function lookUp(token: string, now: number): Promise<Credential | null> {
  const parsed = parseToken(token);
  // A token not of the issued form is refused without a read, and not remembered: only well-formed tokens
  // (short, fixed length) enter the cache, so junk cannot pin memory.
  if (!parsed) return null;
  const stored = await getCredential(parsed.keyId);
  const credential = stored && isSecretMatching(parsed.secret, stored.secretHash) ? stored.credential : null;
  if (cache.size >= MAX_CACHED_TOKENS) cache.clear();
  cache.set(token, { credential, until: now + CREDENTIAL_CACHE_MS });
  return credential;
}

export function requireScope(credential: Credential, scope: Scope): void {
  if (!credential.scopes.includes(scope)) {
    throw new ForbiddenError(`This API key lacks the ${scope} scope`);
  }
}

/** Drops this process's cached answer for a key just revoked here: no wait for CREDENTIAL_CACHE_MS in it. */
export function forgetCredential(keyId: string): void {
  for (const [token, entry] of cache) if (entry.credential?.keyId === keyId) cache.delete(token);
}

export function clearCredentialCache(): void {
  cache.clear();
}
