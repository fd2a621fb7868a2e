import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../http/index.js';
import type { SystemMetadata } from './system-metadata.js';

/**
 * `GET /api/v3/metadata` (all keys, `{}` when none), `GET /api/v3/metadata/:key` (404 when absent),
 * `PUT /api/v3/metadata/:key` (body: any JSON value; `null` deletes; answers the value stored).
 * Described in contract.ts.
 */
export function registerMetadataRoutes(v3: FastifyInstance, metadata: SystemMetadata): void {
  v3.get('/metadata', (_request, reply) => sendJson(reply, metadata.all()));
  v3.get<{ Params: { key: string } }>('/metadata/:key', (request, reply) =>
    sendJson(reply, metadata.get(request.params.key)),
  );
  v3.put<{ Params: { key: string } }>('/metadata/:key', async (request, reply) => {
    if (request.body === undefined) {
      throw new ApiError('BAD_REQUEST', 'body: a JSON value is required (null deletes the key)');
    }
    return sendJson(reply, await metadata.set(request.params.key, request.body));
  });
}

/** Any JSON value (a string or `null` too) as `application/json`. */
function sendJson(reply: FastifyReply, value: unknown): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(value));
}
