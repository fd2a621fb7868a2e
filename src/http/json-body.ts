import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors.js';
import { describeJsonSyntaxError } from './json-syntax-error.js';

/** `application/json` in any case, with or without parameters (docs/api.md#conventions). */
export const JSON_CONTENT_TYPE = /^application\/json\s*(;.*)?$/i;

/**
 * Replaces fastify's body parsers with one strict JSON parser: other content types get 415 from
 * fastify, malformed JSON gets 400 `Invalid JSON` with the parser's position, and an empty body is
 * `undefined` (handlers decide whether that is allowed). Trailing white space, such as the newline
 * some clients send after the JSON, is fine because JSON.parse ignores it.
 */
export function registerJsonBodyParser(server: FastifyInstance, bodyLimitBytes: number): void {
  // core-client-go sends `Content-Type: ` (empty) with the body-less PUTs of its cluster calls
  // (`/cluster/leave`, `/cluster/transfer/:id`, `/cluster/iam/reload`); with no body there is
  // nothing to parse, so the empty header is taken as none rather than answered 415.
  server.addHook('onRequest', (request, _reply, done) => {
    const { headers } = request;
    const length = headers['content-length'];
    const bodyless = length === '0' || (length === undefined && headers['transfer-encoding'] === undefined);
    if (headers['content-type'] === '' && bodyless) delete headers['content-type'];
    done();
  });
  server.removeAllContentTypeParsers();
  server.addContentTypeParser(
    JSON_CONTENT_TYPE,
    { parseAs: 'string', bodyLimit: bodyLimitBytes },
    (_request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') {
        done(null, undefined);
        return;
      }
      try {
        done(null, JSON.parse(text) as unknown);
      } catch (error) {
        done(
          new ApiError('INVALID_JSON', describeJsonSyntaxError(text, (error as Error).message)),
          undefined,
        );
      }
    },
  );
}
