import { Type } from 'typebox';
import { errors, PUBLIC, type RouteDoc } from './route-doc.js';

const document: RouteDoc = {
  summary: 'This OpenAPI 3.1 document',
  tags: ['system'],
  security: PUBLIC,
  responses: {
    200: Type.Object(
      { openapi: Type.String(), info: Type.Object({}), paths: Type.Object({}) },
      { additionalProperties: true },
    ),
    ...errors(),
  },
};

export const DOCUMENT_DOCS: Record<string, RouteDoc> = {
  'GET /api/v3/openapi.json': document,
  'GET /api/swagger/doc.json': document,
};
