import { Type, type TSchema } from 'typebox';

/**
 * The description of one route for the OpenAPI document: what it takes and every answer it can
 * give. Attached to the route's `schema` when the route is registered (install.ts), so
 * @fastify/swagger builds the document from the routes themselves.
 */
export interface RouteDoc {
  /** One line, shown as the operation's summary. */
  summary: string;
  tags: string[];
  /** Security schemes of components.securitySchemes; `[]` means no authentication. */
  security: Record<string, string[]>[];
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  /** Every status the route answers, with its body (JSON schema, or a non-JSON body). */
  responses: Record<number, TSchema>;
  /** Content type of a non-JSON request body (default `application/json` when `body` is given). */
  consumes?: string[];
  /** Content types of the answers (default `application/json`). */
  produces?: string[];
}

/** The error envelope of every error answer (docs/api.md#conventions). */
export const ErrorEnvelope = Type.Object(
  {
    code: Type.Integer({ description: 'the HTTP status' }),
    message: Type.String({ description: 'short, for people' }),
    details: Type.Array(Type.String(), { description: 'the precise reasons; never null' }),
  },
  { $id: 'ErrorEnvelope', title: 'ErrorEnvelope', additionalProperties: false },
);

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request: the details name the field and what was expected',
  401: 'Missing or invalid credentials',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Body too large',
  415: 'Content type not accepted',
  416: 'Range not satisfiable',
  429: 'Too many failed attempts; see Retry-After',
  500: 'Unexpected error; logged with a request id',
  501: 'Not implemented: the details say why and what to do instead',
  502: 'The S3 endpoint failed or refused the request',
  503: 'Service unavailable',
  504: 'The S3 endpoint did not answer in time',
  507: 'Insufficient storage',
  509: 'Session or bandwidth limit reached',
};

/**
 * Error answers with the envelope, for the given statuses. Every route gets 500, and 403: the
 * server's own encoders are refused everywhere but the memory filesystem (process/api/encoder-guard.ts).
 */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const result: Record<number, TSchema> = {};
  for (const status of [...statuses, 403, 500]) {
    result[status] = Type.Ref('ErrorEnvelope', { description: STATUS_TEXT[status] ?? 'Error' });
  }
  return result;
}

/** The answers every route under the guard can give besides its own (403: a request that is not local while authentication is off, docs/security.md). */
export const GUARDED = [401, 403];
/** The answers of a change that is saved to db.json: 507 when the disk is full (500 otherwise). */
export const SAVED = [507];
/** The answers of a route that reads a JSON body. */
export const JSON_BODY = [400, 413, 415];

/** A non-JSON body (a file, a playlist, a text). */
export function opaque(description: string): TSchema {
  return Type.Unsafe<string>({ type: 'string', description });
}

/** An empty answer (304, 201 of an upload). */
export function empty(description: string): TSchema {
  return Type.Unsafe<string>({ type: 'string', maxLength: 0, description });
}

export const BEARER = [{ bearerAuth: [] }];
export const PUBLIC: Record<string, string[]>[] = [];
