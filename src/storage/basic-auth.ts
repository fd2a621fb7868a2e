import { timingSafeEqual, createHash } from 'node:crypto';

/** Credentials for HTTP basic auth; compared in constant time. */
export interface BasicCredentials {
  username: string;
  password: string;
}

/** Parses `Authorization: Basic …` into username and password; undefined when absent or malformed. */
export function parseBasicAuth(header: string | undefined): BasicCredentials | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*basic\s+([A-Za-z0-9+/=._~-]+)\s*$/i.exec(header);
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Whether `header` carries exactly `expected`. Hashing first makes the comparison length-blind. */
export function checkBasicAuth(header: string | undefined, expected: BasicCredentials): boolean {
  const given = parseBasicAuth(header);
  if (given === undefined) return false;
  const userOk = timingSafeEqual(secretDigest(given.username), secretDigest(expected.username));
  const passOk = timingSafeEqual(secretDigest(given.password), secretDigest(expected.password));
  return userOk && passOk;
}

/** SHA-256 of a secret: digests of any two secrets compare in constant time (same length). */
export function secretDigest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
