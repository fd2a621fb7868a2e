import type { preParsingHookHandler, RequestPayload } from 'fastify';
import { Transform, type TransformCallback } from 'node:stream';
import { ApiError } from './errors.js';

/**
 * A route `preParsing` hook that bounds a compressed request body after decoding. @fastify/compress
 * decodes `Content-Encoding` bodies in a `preParsing` hook that runs before the route's own, so this
 * hook sees the decoded bytes. A route's `bodyLimit` counts them too, but the file routes have a
 * large one (a whole upload), which let 100 KB of gzip become 100 MB. Decoded bodies are held to
 * `limitBytes` (`api.max_body_kbytes`, the JSON routes' bound); plain bodies are left to `bodyLimit`.
 */
export function limitInflatedBody(limitBytes: number, key: string): preParsingHookHandler {
  return (request, _reply, payload: RequestPayload, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding === undefined || encoding === '' || encoding === 'identity') {
      done(null, payload);
      return;
    }
    let seen = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
        seen += chunk.length;
        if (seen > limitBytes) {
          callback(
            new ApiError(
              'PAYLOAD_TOO_LARGE',
              `a ${encoding}-encoded body may decode to at most ${limitBytes} bytes (${key})`,
            ),
          );
          return;
        }
        callback(null, chunk);
      },
    });
    payload.on('error', (error: Error) => counter.destroy(error));
    payload.pipe(counter);
    // fastify checks Content-Length against the encoded bytes the decoder saw.
    Object.defineProperty(counter, 'receivedEncodedLength', {
      get: () => payload.receivedEncodedLength,
    });
    done(null, counter);
  };
}
