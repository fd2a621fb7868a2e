import type { FastifyReply, FastifyRequest } from 'fastify';
import { addVary } from '../../http/index.js';
import type { EncodedBody } from '../encoded-body.js';

/** Answers from this size on are gzip-compressed for clients that accept it (SPEC §1.1). */
const GZIP_THRESHOLD_BYTES = 1024;

/**
 * Sends a prepared body, gzip-encoded when it is large enough and the client accepts gzip. The
 * metrics routes do this themselves instead of through @fastify/compress (disabled on them), so a
 * client that does not accept gzip pays nothing for compression, and one that does gets the
 * encoding made once per answer rather than once per request.
 */
export function sendBody(
  request: FastifyRequest,
  reply: FastifyReply,
  contentType: string,
  body: EncodedBody,
): FastifyReply | Promise<FastifyReply> {
  void reply.header('content-type', contentType);
  if (body.bytes.length < GZIP_THRESHOLD_BYTES) return reply.send(body.bytes);
  addVary(reply, 'Accept-Encoding');
  if (!acceptsGzip(request.headers['accept-encoding'])) return reply.send(body.bytes);
  return body.gzip().then((gzipped) => reply.header('content-encoding', 'gzip').send(gzipped));
}

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
