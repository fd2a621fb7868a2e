import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { ErrorSchema, GUARDED_ERRORS } from '../http/index.js';
import type { ConfigStore } from './config-store.js';

/** The v16 layout, described by the keys clients rely on; the rest is docs/compatibility.md's. */
const V16Layout = Type.Object(
  {
    created_at: Type.String(),
    version: Type.Literal(3),
    id: Type.String(),
    name: Type.String(),
    address: Type.String(),
    host: Type.Object({ name: Type.Array(Type.String()), auto: Type.Boolean() }),
    api: Type.Object({}, { additionalProperties: true }),
    storage: Type.Object({}, { additionalProperties: true }),
    rtmp: Type.Object({}, { additionalProperties: true }),
    srt: Type.Object({}, { additionalProperties: true }),
    tls: Type.Object({}, { additionalProperties: true }),
  },
  {
    additionalProperties: true,
    description:
      'The v16 layout; `api.auth.jwt.secret` and `api.auth.password` are always "" (a PUT of "" keeps them)',
  },
);

const ConfigAnswerSchema = Type.Object({
  created_at: Type.String({ description: 'When the stored configuration was written (RFC 3339)' }),
  loaded_at: Type.String({ description: 'When the running configuration was put into effect' }),
  updated_at: Type.String({ description: 'When the stored configuration was last changed' }),
  config: V16Layout,
  overrides: Type.Array(Type.String(), { description: 'Keys set by environment variables' }),
});

/** `"OK"`, as the reference answers a stored or reloaded configuration. */
const Ok = Type.Literal('OK');

/**
 * `GET /api/v3/config` (the stored configuration in the v16 layout), `PUT /api/v3/config` (store a
 * complete or partial v16 layout; takes effect on reload), `GET /api/v3/config/reload`.
 */
export function registerConfigRoutes(v3: FastifyInstance, store: ConfigStore): void {
  const security = [{ bearerAuth: [] }];
  v3.get(
    '/config',
    {
      schema: {
        summary: 'The stored configuration in the datarhei Core v16 layout',
        tags: ['config'],
        security,
        response: { 200: ConfigAnswerSchema, ...GUARDED_ERRORS },
      },
    },
    (_request, reply) => sendJson(reply, store.answer()),
  );
  v3.put(
    '/config',
    {
      schema: {
        summary: 'Store a complete or partial configuration (v16 layout); applied by a reload',
        tags: ['config'],
        security,
        body: Type.Unknown({
          description:
            'The v16 config layout, `version: 3`; missing keys keep their value. Refused (400, naming the key): an integer out of its bounds, a listener address that cannot be bound now, and the API without authentication beyond loopback',
        }),
        response: { 200: Ok, 400: ErrorSchema, 413: ErrorSchema, 415: ErrorSchema, ...GUARDED_ERRORS },
      },
    },
    async (request, reply) => {
      await store.put(request.body);
      return sendJson(reply, 'OK');
    },
  );
  v3.get(
    '/config/reload',
    {
      schema: {
        summary: 'Put the stored configuration into effect without stopping processes',
        tags: ['config'],
        security,
        response: { 200: Ok, 400: ErrorSchema, ...GUARDED_ERRORS },
      },
    },
    async (_request, reply) => {
      await store.reload();
      return sendJson(reply, 'OK');
    },
  );
}

function sendJson(reply: FastifyReply, value: unknown): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(value));
}
