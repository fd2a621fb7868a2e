/**
 * Whether the signature part of a compact JWS is in canonical base64url (RFC 7515 §2, RFC 4648
 * §3.5): decoders such as jose's ignore the unused low bits of the last character, so without this
 * check one token would have several spellings that all verify. Not a forgery, but a credential
 * should have exactly one form, and the access cache is keyed on it.
 */
export function hasCanonicalSignature(token: string): boolean {
  const signature = token.slice(token.lastIndexOf('.') + 1);
  return Buffer.from(signature, 'base64url').toString('base64url') === signature;
}
