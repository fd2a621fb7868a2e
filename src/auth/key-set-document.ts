import type { JSONWebKeySet, JWK } from 'jose';

/**
 * Parses the text of a JSON Web Key Set (RFC 7517 §5): an object whose `keys` member is an array.
 * Members that are not objects with a string `kty` are dropped (RFC 7517 §5: implementations
 * should ignore keys they cannot use); a set without any usable member is an error, thrown with
 * the reason.
 */
export function parseKeySet(text: string): JSONWebKeySet {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`not JSON (${(error as Error).message})`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('not a JSON object');
  const keys = (json as { keys?: unknown }).keys;
  if (!Array.isArray(keys)) throw new Error('no "keys" array');
  const usable = keys.filter(
    (key): key is JWK =>
      typeof key === 'object' && key !== null && !Array.isArray(key) && typeof (key as JWK).kty === 'string',
  );
  if (usable.length === 0) throw new Error('no usable keys');
  return { keys: usable };
}
