import type { FastifyInstance } from 'fastify';
import type { SrtServer } from './srt/index.js';

/**
 * `GET /api/v3/srt`: datarhei Core's `api.SRTChannels` — publishers and players by SRT socket id
 * and each connection's statistics; all maps empty when the SRT server is off. Described in
 * src/ingest/contract.ts.
 */
export function registerSrtRoutes(v3: FastifyInstance, server: () => SrtServer | undefined): void {
  v3.get('/srt', () => server()?.channels() ?? { publisher: {}, subscriber: {}, connections: {}, log: {} });
}
