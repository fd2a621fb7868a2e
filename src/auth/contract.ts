import { Type } from 'typebox';
import { errors, JSON_BODY, type RouteDoc } from '../http/index.js';

export const AUTH_DOCS: Record<string, RouteDoc> = {
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
