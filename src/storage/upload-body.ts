import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { Upload } from './upload.js';

/**
 * Makes every body in `scope` reach its handler as the stream it arrives as, of any content type:
 * the filesystems read it themselves, within their own bounds (a disk upload never in memory).
 */
export function passBodiesAsStreams(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
}

/**
 * The upload of a request whose body `passBodiesAsStreams` left as a stream; a request without a
 * body (no content type, no length) uploads an empty file.
 */
export function uploadOf(request: FastifyRequest): Upload {
  const body = request.body instanceof Readable ? request.body : Readable.from([]);
  const length = request.headers['content-length'];
  const declared = length === undefined ? undefined : Number(length);
  // A decoded body (Content-Encoding) has another length than the one declared.
  const encoded = request.headers['content-encoding'];
  const plain = encoded === undefined || encoded === '' || encoded === 'identity';
  return {
    body,
    declaredBytes: plain && declared !== undefined && Number.isSafeInteger(declared) ? declared : undefined,
  };
}
