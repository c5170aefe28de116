import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// A token is `aqk_<key id>_<secret>`. The key id (64 random bits, hex) is public and names the stored record;
// the secret (256 random bits, base64url) is shown once and only its SHA-256 is stored. A fast hash is right
// here: the secret is random, not a password, so there is nothing to brute-force from the hash.

const PREFIX = 'aqk';
const TOKEN_PATTERN = /^aqk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface IssuedToken {
  token: string;
  keyId: string;
  secretHash: string;
}

export function issueToken(): IssuedToken {
  const keyId = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { token: `${PREFIX}_${keyId}_${secret}`, keyId, secretHash: hashSecret(secret) };
}

export function parseToken(token: string): { keyId: string; secret: string } | null {
  const match = TOKEN_PATTERN.exec(token);
  return match ? { keyId: match[1]!, secret: match[2]! } : null;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function isSecretMatching(secret: string, storedHash: string): boolean {
  const given = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}
