import { errors, opaque, PUBLIC, type RouteDoc } from './route-doc.js';

export const SYSTEM_DOCS: Record<string, RouteDoc> = {
  'GET /ping': {
    summary: 'Liveness check: answers "pong"',
    tags: ['system'],
    security: PUBLIC,
    produces: ['text/plain'],
    responses: { 200: opaque('pong'), ...errors() },
  },
};
