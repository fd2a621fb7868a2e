import type { FastifyInstance } from 'fastify';
import { DOCUMENT_PATHS } from './install.js';

/**
 * Serves the OpenAPI document at both paths, without authentication (it holds no secrets; the
 * guard lets routes marked `public` through), gzip-encoded by the server's compression for
 * clients that accept it. The document is built once, on the first request after start.
 */
export function registerDocumentRoutes(server: FastifyInstance): void {
  let text: string | undefined;
  for (const url of DOCUMENT_PATHS) {
    server.get(url, { config: { public: true } }, (_request, reply) => {
      text ??= JSON.stringify(server.swagger());
      return reply.type('application/json; charset=utf-8').send(text);
    });
  }
}
