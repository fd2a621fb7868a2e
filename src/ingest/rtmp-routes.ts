import type { FastifyInstance } from 'fastify';
import type { RtmpServer } from './rtmp/index.js';

/**
 * `GET /api/v3/rtmp`: the paths being published now, `[{"name": "/live/abc"}]`, oldest first
 * (empty when the RTMP server is off, as in the reference). Described in src/ingest/contract.ts.
 */
export function registerRtmpRoutes(v3: FastifyInstance, server: () => RtmpServer | undefined): void {
  v3.get('/rtmp', () => (server()?.channels() ?? []).map((name) => ({ name })));
}
