import { Type } from 'typebox';
import { errors, JSON_BODY, type RouteDoc } from '../http/index.js';

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

export const AUTH_DOCS: Record<string, RouteDoc> = {
  'GET /api': about,
  'GET /api/': about,
  'POST /api/login': {
    summary: 'Log in with username and password, or with an identity provider token in Authorization',
    tags: ['auth'],
    security: [{}, { providerToken: [] }],
    body: Type.Object(
      { username: Type.Optional(Type.String()), password: Type.Optional(Type.String()) },
      { title: 'Login' },
    ),
    responses: {
      200: Type.Object({ access_token: Type.String(), refresh_token: Type.String() }, { title: 'TokenPair' }),
      ...errors(...JSON_BODY, 401, 404, 429, 503),
    },
  },
  'GET /api/login/refresh': {
    summary: 'A new access token for a refresh token (sent as the bearer token)',
    tags: ['auth'],
    security: [{ bearerAuth: [] }],
    responses: {
      200: Type.Object({ access_token: Type.String() }, { title: 'AccessToken' }),
      ...errors(401, 404),
    },
  },
};
