import { Type } from 'typebox';
import { errors, opaque, PUBLIC, type RouteDoc } from './route-doc.js';

const About = Type.Object(
  {
    app: Type.String({ description: '"datarhei-core": the API family clients check' }),
    auths: Type.Array(Type.String(), {
      description: 'login methods: "localjwt", then one "auth0 …" per tenant',
    }),
    name: Type.Optional(Type.String()),
    id: Type.Optional(Type.String()),
    created_at: Type.Optional(Type.String({ description: 'RFC 3339, UTC' })),
    uptime_seconds: Type.Optional(Type.Integer()),
    version: Type.Object({ number: Type.String() }, { additionalProperties: true }),
    server: Type.Optional(Type.Object({ name: Type.String(), version: Type.String() })),
  },
  { title: 'About' },
);

const about: RouteDoc = {
  summary: 'What this server is: API family and level, login methods; id, name and uptime with a valid token',
  tags: ['system'],
  security: [{}, { bearerAuth: [] }],
  responses: { 200: About, ...errors() },
};

export const SYSTEM_DOCS: Record<string, RouteDoc> = {
  'GET /ping': {
    summary: 'Liveness check: answers "pong"',
    tags: ['system'],
    security: PUBLIC,
    produces: ['text/plain'],
    responses: { 200: opaque('pong'), ...errors() },
  },
  'GET /api': about,
  'GET /api/': about,
  'GET /metrics': {
    summary: 'Prometheus scrape endpoint (text 0.0.4, or OpenMetrics when asked for)',
    tags: ['metrics'],
    security: [{}, { scrapeBearer: [] }, { scrapeBasic: [] }],
    produces: ['text/plain; version=0.0.4', 'application/openmetrics-text'],
    responses: { 200: opaque('the exposition'), ...errors(401, 404) },
  },
};
