import { randomBytes } from 'node:crypto';

/** Ids we hand out are 22 characters of base64url (128 random bits); we accept 8–64 such characters. */
const VALID_ID = /^[A-Za-z0-9_-]{8,64}$/;

export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}

/** Whether a client-supplied `?session=` value is well-formed (malformed ones get 403, docs/sessions.md#the-contract). */
export function isValidSessionId(id: string): boolean {
  return VALID_ID.test(id);
}
