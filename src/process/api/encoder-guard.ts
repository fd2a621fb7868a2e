import type { FastifyInstance } from 'fastify';
import { ApiError, replyError } from '../../http/index.js';

export interface EncoderGuardDeps {
  /** Whether the connection of `socket` was opened by one of the server's encoders. */
  fromEncoder(socket: object): boolean | Promise<boolean>;
  /** The path prefixes encoders may reach (`/memfs/` and the S3 mountpoints: their HLS in and out). */
  openPrefixes: readonly string[];
}

/**
 * Answers requests from the server's own encoders with 403 everywhere but the memory filesystem
 * and the S3 mounts.
 * The address check before an encoder starts cannot see where it will end up: an HTTP redirect
 * from an outside server, or a host name that resolves here, would otherwise let it read the API
 * or `/metrics` into a file anyone can fetch (issue 24 item 3).
 */
export function registerEncoderGuard(server: FastifyInstance, deps: EncoderGuardDeps): void {
  // A callback hook, not an async one: the verdict is known for all but a connection's first
  // request, and then no promise is made for it.
  server.addHook('onRequest', (request, reply, done) => {
    if (deps.openPrefixes.some((prefix) => request.url.startsWith(prefix))) return done();
    const refuse = (): void => {
      const path = request.url.split('?')[0] ?? '';
      void replyError(
        reply,
        new ApiError(
          'FORBIDDEN',
          `${request.method} ${path}: encoders of this server may only reach ${deps.openPrefixes.join(', ')}`,
        ),
      );
    };
    const verdict = deps.fromEncoder(request.raw.socket);
    if (verdict === false) return done();
    if (verdict === true) return refuse();
    verdict.then((fromEncoder) => (fromEncoder ? refuse() : done()), done);
  });
}
