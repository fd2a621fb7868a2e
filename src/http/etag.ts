import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/**
 * A strong validator for a file served from memory that never changes while the server runs (the
 * dashboard's page, Swagger UI's files): a hash of its bytes, 132 bits of it.
 */
export function strongEtag(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
}

/** Whether the client already holds the version with this validator (answer 304). */
export function holdsVersion(request: FastifyRequest, etag: string): boolean {
  return request.headers['if-none-match'] === etag;
}
