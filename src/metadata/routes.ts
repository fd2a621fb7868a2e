import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { ApiError, ErrorSchema, GUARDED_ERRORS } from '../http/index.js';
import type { SystemMetadata } from './system-metadata.js';

const KeyParams = Type.Object({ key: Type.String() });
/** Any JSON value: the answer is serialized as it is stored. */
const AnyJson = Type.Unknown();

/**
 * `GET /api/v3/metadata` (all keys, `{}` when none), `GET /api/v3/metadata/:key` (404 when absent),
 * `PUT /api/v3/metadata/:key` (body: any JSON value; `null` deletes; answers the value stored).
 */
export function registerMetadataRoutes(v3: FastifyInstance, metadata: SystemMetadata): void {
  v3.get(
    '/metadata',
    {
      schema: {
        summary: 'All server-wide metadata',
        tags: ['metadata'],
        security: [{ bearerAuth: [] }],
        response: { 200: AnyJson, ...GUARDED_ERRORS },
      },
    },
    (_request, reply) => sendJson(reply, metadata.all()),
  );
  v3.get<{ Params: { key: string } }>(
    '/metadata/:key',
    {
      schema: {
        summary: 'One server-wide metadata value',
        tags: ['metadata'],
        security: [{ bearerAuth: [] }],
        params: KeyParams,
        response: { 200: AnyJson, 404: ErrorSchema, ...GUARDED_ERRORS },
      },
    },
    (request, reply) => sendJson(reply, metadata.get(request.params.key)),
  );
  v3.put<{ Params: { key: string } }>(
    '/metadata/:key',
    {
      schema: {
        summary: 'Store one server-wide metadata value (null deletes it)',
        tags: ['metadata'],
        security: [{ bearerAuth: [] }],
        params: KeyParams,
        body: AnyJson,
        response: {
          200: AnyJson,
          400: ErrorSchema,
          413: ErrorSchema,
          415: ErrorSchema,
          // The disk is full: the change was not saved, and not applied.
          507: ErrorSchema,
          ...GUARDED_ERRORS,
        },
      },
    },
    async (request, reply) => {
      if (request.body === undefined) {
        throw new ApiError('BAD_REQUEST', 'body: a JSON value is required (null deletes the key)');
      }
      return sendJson(reply, await metadata.set(request.params.key, request.body));
    },
  );
}

/** Any JSON value (a string or `null` too) as `application/json`. */
function sendJson(reply: FastifyReply, value: unknown): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(value));
}
