import type { CryptoKey } from 'jose';
import { createHmac } from 'node:crypto';

/**
 * Derives the HS256 key of our own tokens (SPEC §3.1) as HMAC-SHA256 over the configured username
 * and password, keyed with `api.auth.jwt.secret`. Changing any of the three changes the key and so
 * invalidates every token already issued. The two credentials are JSON-encoded as a pair so that
 * `("a:b", "c")` and `("a", "b:c")` cannot collide. Imported once as a non-extractable CryptoKey.
 */
export async function deriveSigningKey(
  secret: string,
  username: string,
  password: string,
): Promise<CryptoKey> {
  const raw = deriveSigningKeyBytes(secret, username, password);
  return crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

/** The 32 raw key bytes; exported for tests that must sign tokens the server accepts. */
export function deriveSigningKeyBytes(secret: string, username: string, password: string): Uint8Array {
  return new Uint8Array(
    createHmac('sha256', secret)
      .update(JSON.stringify([username, password]))
      .digest(),
  );
}
