import { Type } from 'typebox';

/** Response schema of the error envelope `{code, message, details}` (docs/api.md#conventions), for route schemas. */
export const ErrorSchema = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  details: Type.Array(Type.String()),
});

/** The error answers every guarded /api/v3 route can give. */
export const GUARDED_ERRORS = { 401: ErrorSchema, 403: ErrorSchema, 429: ErrorSchema, 500: ErrorSchema };
