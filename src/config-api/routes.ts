import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TlsStatusView } from '../tls/index.js';
import type { ConfigStore } from './config-store.js';

/**
 * `GET /api/v3/config` (the stored configuration in the v16 layout), `PUT /api/v3/config` (store a
 * complete or partial v16 layout; takes effect on reload), `GET /api/v3/config/reload`.
 */
export function registerConfigRoutes(
  v3: FastifyInstance,
  store: ConfigStore,
  tlsStatus: () => TlsStatusView,
): void {
  // `tls`: what HTTPS is doing (docs/tls.md), beside the configuration that asks for it.
  v3.get('/config', (_request, reply) => sendJson(reply, { ...store.answer(), tls: tlsStatus() }));
  v3.put('/config', async (request, reply) => {
    await store.put(request.body);
    return sendJson(reply, 'OK');
  });
  v3.get('/config/reload', async (_request, reply) => {
    await store.reload();
    return sendJson(reply, 'OK');
  });
}

function sendJson(reply: FastifyReply, value: unknown): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(value));
}
