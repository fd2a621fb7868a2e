import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

/**
 * Derives the HS256 key of our own tokens (docs/auth.md#tokens) as HMAC-SHA256 over the configured username
 * and password, keyed with `api.auth.jwt.secret`. Changing any of the three changes the key and so
 * invalidates every token already issued. The two credentials are JSON-encoded as a pair so that
 * `("a:b", "c")` and `("a", "b:c")` cannot collide. A node:crypto secret key: signing with it is a
 * synchronous HMAC of a few µs, where a WebCrypto key signs through the thread pool (docs/auth.md).
 */
export function deriveSigningKey(secret: string, username: string, password: string): KeyObject {
  return createSecretKey(deriveSigningKeyBytes(secret, username, password));
}

/** The 32 raw key bytes; exported for tests that must sign tokens the server accepts. */
export function deriveSigningKeyBytes(secret: string, username: string, password: string): Uint8Array {
  return new Uint8Array(
    createHmac('sha256', secret)
      .update(JSON.stringify([username, password]))
      .digest(),
  );
}
