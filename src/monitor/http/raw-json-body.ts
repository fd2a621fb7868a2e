import type { FastifyInstance } from 'fastify';
import { JSON_CONTENT_TYPE } from '../../http/index.js';

/** A JSON request body as received, not parsed yet. */
export interface RawJsonBody {
  text: string;
}

/**
 * For the routes of `scope` only: JSON bodies arrive as text (`RawJsonBody`, or `undefined` when
 * blank), so a route can answer a body it has seen before without parsing it again. Same rules as
 * the server's JSON parser (http/json-body.ts): other content types get 415, bodies over the
 * limit 413; the route parses the text and answers malformed JSON with 400 `Invalid JSON`.
 */
export function registerRawJsonBody(scope: FastifyInstance, bodyLimitBytes: number): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(
    JSON_CONTENT_TYPE,
    { parseAs: 'string', bodyLimit: bodyLimitBytes },
    (_request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      done(null, /^\s*$/.test(text) ? undefined : { text });
    },
  );
}
