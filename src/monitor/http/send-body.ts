import type { FastifyReply } from 'fastify';
import { gzipWanted, type EncodedBody } from '../../http/index.js';

/**
 * Sends a prepared body, gzip-encoded when it is large enough and the client accepts gzip. The
 * metrics routes do this themselves instead of through @fastify/compress (disabled on them), so a
 * client that does not accept gzip pays nothing for compression, and one that does gets the
 * encoding made once per answer rather than once per request.
 */
export function sendBody(
  reply: FastifyReply,
  contentType: string,
  body: EncodedBody,
): FastifyReply | Promise<FastifyReply> {
  void reply.header('content-type', contentType);
  if (!gzipWanted(reply, body.bytes.length)) return reply.send(body.bytes);
  return body.gzip().then((gzipped) => reply.header('content-encoding', 'gzip').send(gzipped));
}
