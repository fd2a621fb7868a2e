import { Type, type Static } from 'typebox';
import { BEARER, errors, GUARDED, type RouteDoc } from '../http/index.js';

/** One line of the log in the reference's console form. */
const ConsoleLine = Type.String();
/** One line of the log with `?format=raw`: its fields, with `ts`, `component`, `level`, `message`. */
const RawLine = Type.Record(Type.String(), Type.Unknown());
export type RawLogLine = Static<typeof RawLine>;

const LogQuery = Type.Object({ format: Type.Optional(Type.String()) });
export type LogQueryDto = Static<typeof LogQuery>;

/** The server log route (`/api/v3/log`), described for the API document. */
export const LOG_DOCS: Record<string, RouteDoc> = {
  'GET /api/v3/log': {
    summary: 'The recent lines of the server log (console form, or ?format=raw), secrets masked',
    tags: ['system'],
    security: BEARER,
    querystring: LogQuery,
    responses: {
      200: Type.Union([Type.Array(ConsoleLine), Type.Array(RawLine)]),
      ...errors(...GUARDED, 429),
    },
  },
};
