import { empty, errors, opaque, PUBLIC, type RouteDoc } from '../http/index.js';

export const DASHBOARD_DOCS: Record<string, RouteDoc> = {
  'GET /dashboard': {
    summary: 'Redirects to /dashboard/',
    tags: ['dashboard'],
    security: PUBLIC,
    responses: { 301: empty('Location: /dashboard/'), ...errors() },
  },
  'GET /dashboard/*': {
    summary: 'The built-in dashboard page and its files',
    tags: ['dashboard'],
    security: PUBLIC,
    produces: ['text/html', 'text/javascript', 'text/css'],
    responses: { 200: opaque('the file'), 304: empty('not modified'), ...errors(404, 503) },
  },
};
