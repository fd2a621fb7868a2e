import type { FastifyReply } from 'fastify';
import { addVary } from './vary.js';

/** Answers from this size on are gzip-compressed for clients that accept it (docs/api.md#conventions). */
export const GZIP_THRESHOLD_BYTES = 1024;

/** Does an `Accept-Encoding` header accept gzip (`gzip`, `x-gzip` or `*` with a quality above 0)? */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined || header === '') return false;
  let accepted = false;
  for (const coding of header.split(',')) {
    const [name = '', ...parameters] = coding.split(';').map((part) => part.trim().toLowerCase());
    if (name !== 'gzip' && name !== 'x-gzip' && name !== '*') continue;
    const quality = parameters.find((parameter) => parameter.startsWith('q='));
    const rejected = quality !== undefined && !(Number(quality.slice(2)) > 0);
    // An explicit `gzip;q=0` wins over `*`.
    if (name !== '*' && rejected) return false;
    if (!rejected) accepted = true;
  }
  return accepted;
}

/**
 * Whether an answer of `byteLength` bytes is to be sent gzip-encoded, for the routes and error
 * answers that encode their bodies themselves rather than through @fastify/compress. From the
 * threshold on the answer depends on `Accept-Encoding`, so `Vary` says so whatever the client sent.
 */
export function gzipWanted(reply: FastifyReply, byteLength: number): boolean {
  if (byteLength < GZIP_THRESHOLD_BYTES) return false;
  addVary(reply, 'Accept-Encoding');
  return acceptsGzip(reply.request.headers['accept-encoding']);
}
