import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { RtmpServer } from './rtmp/index.js';

/** datarhei Core's `api.RTMPChannel`. */
const RtmpChannel = Type.Object({ name: Type.String({ minLength: 1 }) });
const ErrorEnvelope = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  details: Type.Array(Type.String()),
});

/**
 * `GET /api/v3/rtmp`: the paths being published now, `[{"name": "/live/abc"}]`, oldest first
 * (empty when the RTMP server is off, as in the reference).
 */
export function registerRtmpRoutes(v3: FastifyInstance, server: RtmpServer | undefined): void {
  v3.get(
    '/rtmp',
    { schema: { response: { 200: Type.Array(RtmpChannel), 401: ErrorEnvelope, 500: ErrorEnvelope } } },
    () => (server?.channels() ?? []).map((name) => ({ name })),
  );
}
