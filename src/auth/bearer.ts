/**
 * The token of an `Authorization: Bearer <token>` header, or undefined when the header is absent or
 * has another shape. The scheme is matched case-insensitively (RFC 7235 §2.1); the token must be
 * one word (RFC 6750 §2.1 allows no spaces in it).
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header.length < 8 || header.charCodeAt(6) !== 0x20) return undefined;
  if (header.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  const token = header.slice(7).trim();
  if (token === '' || /\s/.test(token)) return undefined;
  return token;
}
